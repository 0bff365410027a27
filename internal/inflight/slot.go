package inflight

import (
	"sync"
	"time"
)

// Slot is one request's place under the limit, from Acquire to Release.
// Its latency is the time held minus the time between Queued and Sent.
// A slot may carry several requests one after another (an onboarding
// row's customer, then its source): each calls Queued, and the latency is
// then the time per request, the figure Little's law needs, since a slot
// has one request out at a time.
type Slot struct {
	l     *Limit
	gen   uint64
	start time.Time

	once     sync.Once
	mu       sync.Mutex
	queued   time.Time     // when the request began to wait on the rate limiter
	paced    time.Duration // time spent waiting on the rate limiter
	requests int           // Queued calls: requests the slot carried
}

// Queued marks that the request now waits on the rate limiter: that wait
// is the rate budget's, not the service's, and does not count as latency.
func (s *Slot) Queued() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queued = s.l.opts.Now()
	s.requests++
}

// Sent marks that the rate limiter let the request go (the send gate is
// the place to call it). Without a Queued before it, it does nothing.
func (s *Slot) Sent() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.queued.IsZero() {
		s.paced += s.l.opts.Now().Sub(s.queued)
		s.queued = time.Time{}
	}
}

// Release frees the slot with its request's outcome. Only the first call
// counts, so that a deferred Release is safe.
func (s *Slot) Release(o Outcome) {
	s.once.Do(func() {
		s.mu.Lock()
		latency := (s.l.opts.Now().Sub(s.start) - s.paced) / time.Duration(max(1, s.requests))
		s.mu.Unlock()
		var rate float64
		if o == Answered {
			rate = s.l.rate() // read outside the Limit's lock
		}
		s.l.release(s, o, latency, rate)
	})
}
