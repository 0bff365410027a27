package submit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/state"
)

// downService is the service during an outage while down is set: every
// create is refused at the connection (not processed), and each failed
// call takes a second of the clock, as a connect timeout would.
type downService struct {
	payment.Service
	clock *clocktest.Clock
	down  atomic.Bool
	calls atomic.Int64
}

func (s *downService) CreateCheck(ctx context.Context, row *payment.Row) (*payment.Check, error) {
	if s.down.Load() {
		s.calls.Add(1)
		s.clock.Advance(time.Second)
		return nil, fmt.Errorf("%w: dial tcp 127.0.0.1:1: connection refused", payment.ErrNotDone)
	}
	return s.Service.CreateCheck(ctx, row)
}

// With the API down, the breaker stops the run after BreakAfter of the
// clock, long before every row's attempts are used up; the rows stay
// pending, and the next run, with the API back, creates each exactly once.
func TestBreakerStopsARunThroughAnOutage(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		clock := clocktest.New(clocktest.ChristmasEve)
		r := newRigOpts(t, backend, sandbox.Options{}, testKey, state.Options{Now: clock.Now, SendWindow: time.Hour})
		b := r.load("a.csv", payments(20)...)
		svc := &downService{Service: r.svc, clock: clock}
		svc.down.Store(true)
		// One worker: the clock moves only inside the failing calls, so
		// the count of calls before the breaker trips is exact.
		opts := Options{Concurrency: 1, Now: clock.Now, BreakAfter: 30 * time.Second, SendMargin: time.Millisecond,
			Retry: retry.Policy{Base: time.Millisecond, Max: 2 * time.Millisecond, MaxAttempts: 1000}}
		sum, err := New(r.db, svc, opts).Run(context.Background())
		if !errors.Is(err, ErrOutage) {
			t.Fatalf("Run = %v, want ErrOutage", err)
		}
		if !errors.Is(err, payment.ErrNotDone) {
			t.Fatalf("the run's error does not carry the last API error: %v", err)
		}
		for _, want := range []string{"the API failed every call for 30s", "20 rows left pending", "the next run tries again", "connection refused"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not say %q", err, want)
			}
		}
		if sum.Pending != 20 || sum.InDoubt != 0 || sum.Created != 0 {
			t.Fatalf("summary %+v: want all 20 rows pending", sum)
		}
		if got := svc.calls.Load(); got != 31 { // failures at 0s..30s of the clock
			t.Fatalf("%d creates tried, want 31", got)
		}
		svc.down.Store(false)
		if _, err := New(r.db, svc, opts).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		r.assertExactlyOnce(b.ID, 20)
	})
}

// A success in between resets the breaker: only an unbroken run of
// failures trips it.
func TestBreakerResetsOnSuccess(t *testing.T) {
	clock := clocktest.New(clocktest.ChristmasEve)
	b := newBreaker(10*time.Second, clock.Now)
	for range 3 {
		if b.failure(errors.New("x")) != nil {
			t.Fatal("tripped early")
		}
		clock.Advance(9 * time.Second)
		b.success()
	}
	b.failure(errors.New("x"))
	clock.Advance(10 * time.Second)
	if b.failure(errors.New("y")) == nil {
		t.Fatal("10s of failures did not trip it")
	}
	if b.failure(errors.New("z")) != nil {
		t.Fatal("tripped twice")
	}
	if newBreaker(0, clock.Now).failure(errors.New("x")) != nil {
		t.Fatal("a breaker with no BreakAfter tripped")
	}
}

// throttled is a 429 that names its wait.
type throttled struct{ error }

func (throttled) RetryDelay() time.Duration { return time.Hour }

// Throttling is the service answering, however long it asks to wait: it
// never trips the breaker, and it resets it.
func TestBreakerIgnoresThrottling(t *testing.T) {
	clock := clocktest.New(clocktest.ChristmasEve)
	r := New(nil, nil, Options{BreakAfter: time.Minute, Now: clock.Now})
	down := fmt.Errorf("%w: connection refused", payment.ErrNotDone)
	r.feedBreaker(down)
	clock.Advance(50 * time.Second)
	r.feedBreaker(throttled{fmt.Errorf("%w: HTTP 429", payment.ErrNotDone)})
	clock.Advance(50 * time.Second)
	r.feedBreaker(down)
	if h := r.eng.HaltedBy(); h != nil {
		t.Fatalf("halted after a 429 in between: %v", h)
	}
	clock.Advance(time.Minute)
	r.feedBreaker(down)
	if h := r.eng.HaltedBy(); h == nil || !errors.Is(h, ErrOutage) {
		t.Fatal("a minute of refused connections did not trip the breaker")
	}
}
