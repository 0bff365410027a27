// Package throttle provides the one token bucket that every API call batchd
// makes goes through, with additive-increase/multiplicative-decrease (AIMD)
// so that a 429 from the service slows the whole process down, not just the
// worker that saw it.
package throttle

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/batchd/batchd/internal/retry"
)

// Limiter is a token bucket whose rate halves on each 429 (at most once per
// cooldown, because a burst of in-flight requests all answer 429 together)
// and then climbs back linearly, never above the configured ceiling.
// It is safe for concurrent use.
type Limiter struct {
	lim *rate.Limiter
	now func() time.Time

	mu        sync.Mutex
	ceiling   rate.Limit
	floor     rate.Limit
	step      rate.Limit // additive increase per second of quiet
	cooldown  time.Duration
	lastDown  time.Time
	lastStep  time.Time
	pausedTil time.Time
}

// New returns a Limiter allowing rps requests per second with the given
// burst. rps <= 0 means unlimited.
func New(rps float64, burst int) *Limiter {
	return newAt(rps, burst, time.Now)
}

func newAt(rps float64, burst int, now func() time.Time) *Limiter {
	if burst < 1 {
		burst = 1
	}
	ceiling := rate.Limit(rps)
	if rps <= 0 {
		ceiling = rate.Inf
	}
	l := &Limiter{
		lim:      rate.NewLimiter(ceiling, burst),
		now:      now,
		ceiling:  ceiling,
		floor:    ceiling / 20,
		step:     ceiling / 20,
		cooldown: time.Second,
	}
	if l.floor < 0.5 {
		l.floor = 0.5
	}
	if l.step < 0.5 {
		l.step = 0.5
	}
	t := now()
	l.lastDown, l.lastStep = t.Add(-l.cooldown), t
	return l
}

// Wait blocks until a request may be sent or ctx is done. It honours any
// pause set by Pause.
func (l *Limiter) Wait(ctx context.Context) error {
	l.mu.Lock()
	l.recoverLocked()
	pause := l.pausedTil.Sub(l.now())
	l.mu.Unlock()
	if pause > 0 {
		if err := retry.Sleep(ctx, pause); err != nil {
			return err
		}
	}
	return l.lim.Wait(ctx)
}

// Throttled records a 429: the rate halves, unless it already did within
// the cooldown.
func (l *Limiter) Throttled() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ceiling == rate.Inf {
		return
	}
	t := l.now()
	if t.Sub(l.lastDown) < l.cooldown {
		return
	}
	next := l.lim.Limit() / 2
	if next < l.floor {
		next = l.floor
	}
	l.lim.SetLimitAt(t, next)
	l.lastDown, l.lastStep = t, t
}

// Pause holds every caller of Wait for d, as a Retry-After asks.
func (l *Limiter) Pause(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until := l.now().Add(d); until.After(l.pausedTil) {
		l.pausedTil = until
	}
}

// Rate reports the current requests per second (rate.Inf, the largest
// float64, when unlimited).
func (l *Limiter) Rate() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recoverLocked()
	return float64(l.lim.Limit())
}

// recoverLocked applies the additive increase earned since the last change.
func (l *Limiter) recoverLocked() {
	cur := l.lim.Limit()
	if cur >= l.ceiling {
		return
	}
	t := l.now()
	secs := t.Sub(l.lastStep).Seconds()
	if secs < 1 {
		return
	}
	next := cur + l.step*rate.Limit(int(secs))
	if next > l.ceiling {
		next = l.ceiling
	}
	l.lim.SetLimitAt(t, next)
	l.lastStep = l.lastStep.Add(time.Duration(int(secs)) * time.Second)
}
