package inflight

import (
	"context"
	"math"
	"sync"
	"time"
)

// Defaults for the zero values of Options.
const (
	// DefaultInitial is the limit a new Limit starts at: small, so that a
	// slow or failing service is not hit by the whole ceiling at once.
	DefaultInitial = 4
	// DefaultHeadroom multiplies Little's law's figure: latency varies,
	// and a slot also covers the ledger commits around its request.
	DefaultHeadroom = 1.5
	// LatencyTolerance is how far above its long-run average the recent
	// latency may be and still be the service's pace: beyond it, latency
	// is queueing at the service, which more requests in flight would
	// only lengthen, and the target falls back to the long-run average.
	LatencyTolerance = 2.0
	// shortWeight and longWeight are the weights of a new sample in the
	// short and long moving averages of the latency: the short one
	// follows a few round trips, the long one about 500 requests. Until
	// it has 1/longWeight samples, the long one is their plain mean, so
	// that the first answer alone does not stand for the service's pace.
	shortWeight = 0.2
	longWeight  = 0.002
	settled     = int(1 / longWeight)
)

// Outcome is what became of a slot's request, told to Slot.Release.
type Outcome int

const (
	// Ignored: no request left (a stop, a send-by gate, a ledger
	// failure); the slot tells nothing about the service.
	Ignored Outcome = iota
	// Answered: the service answered, with a success or a refusal of the
	// request; the slot's latency is a sample and the limit may grow.
	Answered
	// Dropped: a 429, a 5xx, a timeout or a transport error; the limit
	// halves, once per window.
	Dropped
)

// Options configures a Limit.
type Options struct {
	// Ceiling is the most requests ever in flight (api.concurrency); at
	// least 1.
	Ceiling int
	// Initial is the starting limit; zero means DefaultInitial, and it
	// never exceeds Ceiling.
	Initial int
	// Rate, when set, reports the requests per second the shared rate
	// limiter allows now (throttle.Limiter.Rate); nil, zero or +Inf means
	// no rate budget, and the target is the ceiling. It must be cheap and
	// safe for concurrent use.
	Rate func() float64
	// Headroom multiplies rate x latency; zero means DefaultHeadroom.
	Headroom float64
	// Now is the clock latencies are measured on; nil means the wall
	// clock. Only differences are used. A frozen test clock measures no
	// latency, and the limit then grows as without a rate.
	Now func() time.Time
}

// Limit is an adaptive concurrency limit. It is safe for concurrent use;
// waiters are served first come, first served.
type Limit struct {
	opts Options

	mu       sync.Mutex
	limit    int
	inFlight int
	queue    []*waiter
	gen      uint64  // bumped by every decrease: one decrease per window
	short    float64 // moving averages of the latency, in seconds; 0: no sample yet
	long     float64
	samples  int // latency samples so far, up to settled
}

// waiter is an Acquire waiting its turn; ready is closed with slot set
// when it is granted.
type waiter struct {
	ready chan struct{}
	slot  *Slot
}

// New returns a Limit at opts.Initial.
func New(opts Options) *Limit {
	if opts.Ceiling < 1 {
		opts.Ceiling = 1
	}
	if opts.Initial <= 0 {
		opts.Initial = DefaultInitial
	}
	opts.Initial = min(opts.Initial, opts.Ceiling)
	if opts.Headroom <= 0 {
		opts.Headroom = DefaultHeadroom
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Limit{opts: opts, limit: opts.Initial}
}

// Current reports the limit now.
func (l *Limit) Current() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limit
}

// InFlight reports the slots held now.
func (l *Limit) InFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inFlight
}

// Ceiling reports Options.Ceiling: how many workers may ever need a slot.
func (l *Limit) Ceiling() int { return l.opts.Ceiling }

// Acquire waits for a slot, or returns ctx's error. The caller must
// Release the slot it gets exactly once.
func (l *Limit) Acquire(ctx context.Context) (*Slot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	if l.inFlight < l.limit && len(l.queue) == 0 {
		s := l.grantLocked()
		l.mu.Unlock()
		return s, nil
	}
	w := &waiter{ready: make(chan struct{})}
	l.queue = append(l.queue, w)
	l.mu.Unlock()
	select {
	case <-w.ready:
		return w.slot, nil
	case <-ctx.Done():
		return nil, l.abandon(w, ctx.Err())
	}
}

// abandon takes a cancelled waiter out of the queue; one granted in the
// meantime gives its slot back.
func (l *Limit) abandon(w *waiter, err error) error {
	l.mu.Lock()
	select {
	case <-w.ready:
		l.mu.Unlock()
		w.slot.Release(Ignored)
		return err
	default:
	}
	for i, q := range l.queue {
		if q == w {
			l.queue = append(l.queue[:i], l.queue[i+1:]...)
			break
		}
	}
	l.mu.Unlock()
	return err
}

// grantLocked takes a slot.
func (l *Limit) grantLocked() *Slot {
	l.inFlight++
	return &Slot{l: l, gen: l.gen, start: l.opts.Now()}
}

// serveLocked hands free slots to waiters in arrival order.
func (l *Limit) serveLocked() {
	for l.inFlight < l.limit && len(l.queue) > 0 {
		w := l.queue[0]
		l.queue[0] = nil
		l.queue = l.queue[1:]
		w.slot = l.grantLocked()
		close(w.ready)
	}
}

// release frees s's slot and adapts the limit to its outcome.
func (l *Limit) release(s *Slot, o Outcome, latency time.Duration, rate float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
	switch o {
	case Answered:
		l.sampleLocked(latency)
		l.limit = min(l.limit+1, l.targetLocked(rate))
	case Dropped:
		if s.gen == l.gen { // the first drop of the window
			l.limit = max(1, l.limit/2)
			l.gen++
		}
	}
	l.serveLocked()
}

// sampleLocked folds one latency into the moving averages; a zero
// latency (a frozen clock) is no sample.
func (l *Limit) sampleLocked(d time.Duration) {
	if d <= 0 {
		return
	}
	sec := d.Seconds()
	if l.samples < settled {
		l.samples++
	}
	if l.short == 0 {
		l.short, l.long = sec, sec
		return
	}
	l.short += shortWeight * (sec - l.short)
	if l.samples < settled {
		l.long += (sec - l.long) / float64(l.samples) // the mean so far
		return
	}
	// Queueing must not become the pace it is measured against: once the
	// average is settled, a sample counts in it for at most
	// LatencyTolerance times it, so a lasting change of pace is learned
	// within a few hundred answers and a burst of slow ones moves it
	// little.
	l.long += longWeight * (min(sec, LatencyTolerance*l.long) - l.long)
}

// targetLocked is Little's law: ceil(rate x latency x headroom), between
// 1 and the ceiling; the ceiling without a rate or a latency sample. The
// latency is the recent one while it is within LatencyTolerance of the
// long-run average, and the long-run average when it is above: queueing
// at the service then shrinks the limit to what the rate needs at the
// service's normal pace, instead of buying slots that would queue too.
func (l *Limit) targetLocked(rate float64) int {
	if rate <= 0 || math.IsInf(rate, 1) || l.short == 0 {
		return l.opts.Ceiling
	}
	lat := l.short
	if lat > LatencyTolerance*l.long {
		lat = l.long
	}
	t := math.Ceil(rate * lat * l.opts.Headroom)
	if t >= float64(l.opts.Ceiling) {
		return l.opts.Ceiling
	}
	return max(1, int(t))
}

// Target reports what the limit is heading for at the current rate.
func (l *Limit) Target() int {
	rate := l.rate()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.targetLocked(rate)
}

func (l *Limit) rate() float64 {
	if l.opts.Rate == nil {
		return 0
	}
	return l.opts.Rate()
}
