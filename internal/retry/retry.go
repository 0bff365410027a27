// Package retry computes waits between attempts: exponential backoff with
// full jitter, capped, and overridden by a server's Retry-After.
package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff describes an exponential backoff with full jitter: attempt n waits
// a uniformly random duration in [0, min(Max, Base·2ⁿ)). Full jitter spreads
// the retries of many workers so they do not return to the service in step.
type Backoff struct {
	Base time.Duration // first ceiling; default 250ms
	Max  time.Duration // cap; default 1m
	// Rand returns a number in [0, 1); nil uses math/rand/v2.
	Rand func() float64
}

// Delay returns the wait before attempt n (n >= 0 counts failures so far).
// A positive retryAfter from the server wins when it is longer.
func (b Backoff) Delay(n int, retryAfter time.Duration) time.Duration {
	base, max := b.Base, b.Max
	if base <= 0 {
		base = 250 * time.Millisecond
	}
	if max <= 0 {
		max = time.Minute
	}
	ceil := max
	if n < 30 {
		if c := base << n; c > 0 && c < max {
			ceil = c
		}
	}
	r := rand.Float64
	if b.Rand != nil {
		r = b.Rand
	}
	d := time.Duration(r() * float64(ceil))
	if retryAfter > d {
		d = retryAfter
	}
	return d
}

// Sleep waits d or until ctx is done, and reports ctx's error in that case.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
