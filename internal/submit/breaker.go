package submit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// ErrOutage is wrapped by Run's error when its circuit breaker stopped the
// run: every create failed for Options.BreakAfter with no success in
// between. Nothing is left in a state that could pay twice: rows not yet
// sent stay pending, rows whose answer was lost are in doubt and are
// looked up by the next run, as always.
var ErrOutage = errors.New("submit stopped: the API failed every call")

// breaker is submit's circuit breaker. A run retrying through an outage
// would otherwise work through every row's attempts, which with many rows
// takes hours of failing requests; past after, with no success, it stops.
// It is safe for concurrent use: every worker reports to it.
type breaker struct {
	after time.Duration // 0: never trips
	now   func() time.Time

	mu      sync.Mutex
	since   time.Time // the first failure since the last success; zero when none
	tripped chan struct{}
	cause   *outageError
}

// outageError is why the breaker tripped; Runner.finish adds what is left.
type outageError struct {
	span time.Duration
	last error
}

func (e *outageError) Error() string {
	return fmt.Sprintf("%v for %s: %v", ErrOutage, e.span.Round(time.Second), e.last)
}

func (e *outageError) Unwrap() []error { return []error{ErrOutage, e.last} }

func newBreaker(after time.Duration, now func() time.Time) *breaker {
	return &breaker{after: after, now: now, tripped: make(chan struct{})}
}

// success is an answer from the API (a check created, a row refused): the
// service works.
func (b *breaker) success() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.since = time.Time{}
}

// failure records a create the service did not answer or did not act on,
// and returns the breaker's error when every create has now failed for
// after: the first such failure trips it.
func (b *breaker) failure(err error) *outageError {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cause != nil || b.after <= 0 {
		return nil
	}
	if b.since.IsZero() {
		b.since = now
	}
	if span := now.Sub(b.since); span >= b.after {
		b.cause = &outageError{span: span, last: err}
		close(b.tripped)
		return b.cause
	}
	return nil
}

// cancelOnTrip returns a context cancelled when the breaker trips, so that
// workers waiting out a backoff stop at once rather than at its end.
func (b *breaker) cancelOnTrip(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-b.tripped:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// feedBreaker tells the breaker of a failed create. A create the service
// did not answer or did not act on is a failure; a refusal, or a "not now"
// that names its wait (429 with Retry-After), is the service answering:
// throttling is not an outage, and its waits may be long. The run halts
// when the breaker trips.
func (r *Runner) feedBreaker(err error) {
	switch f := payment.FailureOf(err); {
	case f != payment.FailLost && f != payment.FailNotDone, payment.RetryAfter(err) > 0:
		r.brk.success()
		return
	}
	if oe := r.brk.failure(err); oe != nil {
		r.log.Error("circuit breaker: the API failed every call; no more creates in this run", "for", oe.span.Round(time.Second).String(), "err", err)
		r.eng.Halt(oe)
	}
}

// outageSummary is the run's error when the breaker stopped it: how long,
// what is left, and that the next run tries again.
func outageSummary(oe *outageError, sum Summary) error {
	return fmt.Errorf("%w for %s; %d rows left pending, %d in doubt (looked up before any resend); the next run tries again; the last error: %w",
		ErrOutage, oe.span.Round(time.Second), sum.Pending, sum.InDoubt, oe.last)
}
