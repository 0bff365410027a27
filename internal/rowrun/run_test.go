package rowrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/inflight"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
)

// row is a fake kind's row.
type row struct {
	key     payment.RowKey
	state   payment.RowState
	attempt time.Time
	sends   int
}

// fakeKind sends each row; the first send of a row loses its answer (in
// doubt), and its lookup finds nothing unless found says otherwise
// (released, sent again) or fails when lookupFails is set.
type fakeKind struct {
	e           *Engine
	clk         *clocktest.Clock
	rows        []*row
	found       bool
	lookupFails bool
	lookups     int
}

func (r *row) Attempt() payment.Attempt {
	return payment.Attempt{Key: r.key, State: r.state, At: r.attempt}
}

// kind is the fake kind for Run.
func (f *fakeKind) kind() Kind[*row] {
	return Kind[*row]{
		Recover: func() (int, error) { return 0, nil },
		Open: func(fn func(*row) (bool, error)) error {
			for _, r := range f.rows {
				if more, err := fn(r); !more || err != nil {
					return err
				}
			}
			return nil
		},
		Resolve: f.Resolve, SendPending: f.SendPending,
	}
}

func (f *fakeKind) Resolve(_ context.Context, due []*row) error {
	for _, r := range due {
		f.lookups++
		switch {
		case f.lookupFails:
			f.e.GiveUp(r.key, errors.New("lookup failed"))
		case f.found:
			r.state = payment.Submitted
		default:
			r.state = payment.Pending
		}
	}
	return nil
}

func (f *fakeKind) SendPending(ctx context.Context) (int, error) {
	sent := 0
	for _, r := range f.rows {
		if r.state != payment.Pending || f.e.Skipped(r.key) {
			continue
		}
		sent++
		f.e.Send(ctx, r.key, func(context.Context, *inflight.Slot) (inflight.Outcome, error) {
			r.sends++
			r.attempt = f.clk.Now()
			if r.sends == 1 {
				r.state = payment.InDoubt
			} else {
				r.state = payment.Submitted
			}
			return inflight.Answered, nil
		})
	}
	return sent, ctx.Err()
}

func newFake(n int) *fakeKind {
	clk := clocktest.New(clocktest.Monday)
	f := &fakeKind{clk: clk}
	// Sleeping moves the clock: the engine's waits end when it says so.
	sleep := func(ctx context.Context, d time.Duration) error { clk.Advance(d); return ctx.Err() }
	f.e = New(Options{Now: clk.Now, Sleep: sleep, ResolveAfter: time.Minute,
		Retry: retry.Policy{Base: time.Millisecond, Max: time.Millisecond}})
	for i := range n {
		f.rows = append(f.rows, &row{key: payment.RowKey{Batch: 1, Line: uint32(i + 2)}, state: payment.Pending})
	}
	return f
}

// A row in doubt is looked up once its ResolveAfter passed on the
// engine's clock, never sent again before, and sent again once the
// lookup released it.
func TestRunWaitsForLookupsThenResends(t *testing.T) {
	f := newFake(3)
	start := f.clk.Now()
	if err := Run(context.Background(), f.e, f.kind()); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.rows {
		if r.state != payment.Submitted || r.sends != 2 {
			t.Fatalf("row %s: state %s after %d sends, want sent after 2", r.key, r.state, r.sends)
		}
	}
	if f.lookups != 3 {
		t.Fatalf("%d lookups, want 3", f.lookups)
	}
	if waited := f.clk.Now().Sub(start); waited < time.Minute {
		t.Fatalf("looked up after %v, before ResolveAfter", waited)
	}
}

// A row whose lookup found its check is not sent again.
func TestRunFoundIsNotResent(t *testing.T) {
	f := newFake(2)
	f.found = true
	if err := Run(context.Background(), f.e, f.kind()); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.rows {
		if r.sends != 1 || r.state != payment.Submitted {
			t.Fatalf("row %s: %d sends, state %s; want one send, bound", r.key, r.sends, r.state)
		}
	}
}

// A row whose lookup failed stays in doubt, given up on: the run ends
// without waiting or looping on it, and the outcome names the failure.
func TestRunGivesUpOnFailedLookups(t *testing.T) {
	f := newFake(2)
	f.lookupFails = true
	err := Run(context.Background(), f.e, f.kind())
	if err != nil {
		t.Fatal(err)
	}
	if f.lookups != 2 {
		t.Fatalf("%d lookups, want one per row", f.lookups)
	}
	incomplete := errors.New("incomplete")
	out := f.e.Outcome(nil, incomplete, "2 rows in doubt")
	if !errors.Is(out, incomplete) || !strings.Contains(out.Error(), "lookup failed") {
		t.Fatalf("outcome %v, want incomplete naming the lookup's failure", out)
	}
}

// Send gives a row up after its tries, and never for ErrTurnAgain.
func TestSendTriesAndTurns(t *testing.T) {
	f := newFake(0)
	k := payment.RowKey{Batch: 1, Line: 2}
	tries := 0
	f.e.Send(context.Background(), k, func(context.Context, *inflight.Slot) (inflight.Outcome, error) {
		tries++
		return inflight.Dropped, fmt.Errorf("%w: 503", payment.ErrNotDone)
	})
	if tries != 10 || !f.e.Skipped(k) {
		t.Fatalf("%d tries, skipped %v; want 10 tries (the default) then given up", tries, f.e.Skipped(k))
	}
	k2 := payment.RowKey{Batch: 1, Line: 3}
	f.e.Send(context.Background(), k2, func(context.Context, *inflight.Slot) (inflight.Outcome, error) {
		return inflight.Answered, retry.Permanent(fmt.Errorf("%w: customer found", ErrTurnAgain))
	})
	if f.e.Skipped(k2) {
		t.Fatal("a row sent back for its turn was given up on")
	}
}

// A halted run sends nothing more, and its outcome is the halt's cause.
func TestHaltStopsSends(t *testing.T) {
	f := newFake(0)
	cause := fmt.Errorf("%w: disk full", payment.ErrLedger)
	f.e.Halt(cause)
	called := false
	f.e.Send(context.Background(), payment.RowKey{Batch: 1, Line: 2}, func(context.Context, *inflight.Slot) (inflight.Outcome, error) {
		called = true
		return inflight.Answered, nil
	})
	if called {
		t.Fatal("a halted run sent a row")
	}
	if out := f.e.Outcome(nil, errors.New("x"), "left"); !errors.Is(out, payment.ErrLedger) {
		t.Fatalf("outcome %v, want the halt's cause", out)
	}
}

// A ledger write that fails while a failure is recorded stops the run,
// naming the row and the write; a refusal recorded is counted.
func TestEngineFailedWrites(t *testing.T) {
	f := newFake(0)
	k := payment.RowKey{Batch: 1, Line: 7}
	rejected := 0
	ok := Writes{
		Reject:  func(string) error { return nil },
		Release: func(string) error { return nil },
		Doubt:   func(string) error { return nil },
	}
	if err := f.e.Failed(k, fmt.Errorf("%w: bad routing", payment.ErrRefused), "", ok, func() { rejected++ }, nil); err != nil || rejected != 1 {
		t.Fatalf("refusal: %v, %d counted", err, rejected)
	}
	broken := ok
	broken.Doubt = func(string) error { return errors.New("disk full") }
	f.e.Failed(k, errors.New("timeout"), "create", broken, nil, nil)
	if h := f.e.HaltedBy(); h == nil || !strings.Contains(h.Error(), "record batch 1 line 7 in doubt: disk full") {
		t.Fatalf("halted by %v, want the doubt write named", h)
	}
}
