package submit

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/batchd/batchd/internal/inflight"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/sandbox"
)

// watchedService counts, at every create, the creates under way and the
// rows the ledger holds in flight.
type watchedService struct {
	payment.Service
	led payment.Rows
	t   *testing.T

	mu                     sync.Mutex
	calls, mostCalls, most int
}

func (s *watchedService) CreateCheck(ctx context.Context, row *payment.Row) (*payment.Check, error) {
	s.mu.Lock()
	s.calls++
	s.mostCalls = max(s.mostCalls, s.calls)
	inFlight := 0
	err := s.led.OpenRows(func(r *payment.Row) (bool, error) {
		if r.State == payment.InFlight {
			inFlight++
		}
		return true, nil
	})
	s.most = max(s.most, inFlight)
	s.mu.Unlock()
	if err != nil {
		s.t.Error(err)
	}
	defer func() {
		s.mu.Lock()
		s.calls--
		s.mu.Unlock()
	}()
	return s.Service.CreateCheck(ctx, row)
}

// Eight workers under an in-flight limit of two: a row waiting for a slot
// stays pending, so never more than two rows are in flight in the ledger
// or creates at the service, and every row is still created once.
func TestRowsWaitingForASlotStayPending(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, sandbox.Options{}, testKey)
		b := r.load("slots.csv", payments(40)...)
		svc := &watchedService{Service: r.svc, led: r.db, t: t}
		lim := inflight.New(inflight.Options{Ceiling: 2})
		sum, err := New(r.db, svc, Options{Concurrency: 8, Limit: lim, Retry: fast()}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if sum.Created != 40 || sum.Attempts != 40 {
			t.Fatalf("summary %+v", sum)
		}
		r.assertExactlyOnce(b.ID, 40)
		if svc.most > 2 || svc.mostCalls > 2 {
			t.Fatalf("%d rows in flight and %d creates at once under a limit of 2", svc.most, svc.mostCalls)
		}
		if n := lim.InFlight(); n != 0 {
			t.Fatalf("%d slots still held after the run", n)
		}
	})
}

// A Limit given without Concurrency sets the number of workers: its
// ceiling.
func TestWorkersFollowTheLimitsCeiling(t *testing.T) {
	run := New(nil, nil, Options{Limit: inflight.New(inflight.Options{Ceiling: 64})})
	if n := run.eng.Workers(); n != 64 {
		t.Fatalf("workers %d, want the ceiling 64", n)
	}
}

// A run halted by a refused key sends nothing more, not even the creates
// of rows whose workers were waiting for a slot: with eight workers under
// a limit of one, only the first create leaves.
func TestHaltedRunSendsNothingAfterTheSlotWait(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, sandbox.Options{Keys: []sandbox.Key{{Value: "sk_test_the_right_key"}}}, "sk_test_a_wrong_key_12345")
		r.load("halt.csv", payments(20)...)
		lim := inflight.New(inflight.Options{Ceiling: 1})
		sum, err := New(r.db, r.svc, Options{Concurrency: 8, Limit: lim, Retry: fast()}).Run(context.Background())
		if !errors.Is(err, payment.ErrKeyRefused) {
			t.Fatalf("want payment.ErrKeyRefused, got %v", err)
		}
		if sum.Attempts != 1 || sum.Pending != 20 {
			t.Fatalf("summary %+v: want one create sent and every row pending", sum)
		}
	})
}
