package resolve

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/state"
)

// sendWindow is the send-by window of the ledger below, as a shared
// ledger under a leader lease sets it.
const sendWindow = 30 * time.Second

// fresh reads rows again from the ledger.
func (r *rig) fresh(t *testing.T, rows []*payment.Row) []*payment.Row {
	t.Helper()
	out := make([]*payment.Row, len(rows))
	for i, row := range rows {
		got, err := r.db.Row(row.Key)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = got
	}
	return out
}

func states(rows []*payment.Row) []payment.RowState {
	out := make([]payment.RowState, len(rows))
	for i, row := range rows {
		out[i] = row.State
	}
	return out
}

// A row in doubt whose create may still leave (its send-by deadline plus
// the margin is ahead) is never released, however complete the lookup;
// a check found for a row is bound at once, deadline or not. Once the
// deadline and the margin have passed on the resolver's clock, the row
// with no check is released.
func TestReleaseWaitsForSendByAndMargin(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		for _, margin := range []time.Duration{0, 20 * time.Second} {
			t.Run(fmt.Sprintf("margin=%s", margin), func(t *testing.T) {
				clock := clocktest.New(clocktest.Monday)
				r := newRigState(t, backend, clock, sandbox.Options{}, state.Options{SendWindow: sendWindow})
				rows := r.inDoubt(t, "Payroll-Nov", "0000101", "0000102")
				sendBy := rows[1].SendBy
				if want := clocktest.Monday.Add(sendWindow); !sendBy.Equal(want) {
					t.Fatalf("the ledger set SendBy %v, want %v", sendBy, want)
				}
				r.create(t, rows[0]) // its request did leave
				res := r.resolver()
				res.SendMargin = margin
				effective := margin
				if effective == 0 {
					effective = DefaultSendMargin
				}
				if got := res.ReleasableAt(rows[1]); !got.Equal(sendBy.Add(effective)) {
					t.Fatalf("ReleasableAt %v, want SendBy plus %s", got, effective)
				}
				ctx := context.Background()

				out, err := res.Resolve(ctx, rows)
				if err != nil {
					t.Fatal(err)
				}
				rows = r.fresh(t, rows)
				if out.Found != 1 || out.Released != 0 || out.Waiting != 1 || rows[0].State != payment.Submitted || rows[1].State != payment.InDoubt {
					t.Fatalf("before the deadline: outcome %+v, states %v; want the found check bound and the other row left in doubt", out, states(rows))
				}

				clock.Set(sendBy.Add(effective - time.Millisecond))
				out, err = res.Resolve(ctx, rows[1:])
				if err != nil {
					t.Fatal(err)
				}
				if st := r.fresh(t, rows[1:])[0].State; out.Released != 0 || out.Waiting != 1 || st != payment.InDoubt {
					t.Fatalf("a millisecond before the deadline and margin: outcome %+v, row %s; want it left in doubt", out, st)
				}

				clock.Set(sendBy.Add(effective))
				out, err = res.Resolve(ctx, rows[1:])
				if err != nil {
					t.Fatal(err)
				}
				if st := r.fresh(t, rows[1:])[0].State; out.Released != 1 || out.Waiting != 0 || st != payment.Pending {
					t.Fatalf("at the deadline and margin: outcome %+v, row %s; want it released", out, st)
				}
			})
		}
	})
}

// A row with no deadline (a ledger that sets none: bbolt alone) is
// released by a complete lookup as before; a resolver without a clock
// still releases nothing.
func TestNoSendByReleasesAndNoClockRefuses(t *testing.T) {
	r := newRig(t, ledgertest.Bbolt, false)
	rows := r.inDoubt(t, "Payroll-Nov", "0000101")
	if !rows[0].SendBy.IsZero() {
		t.Fatalf("a ledger with no send window set SendBy %v", rows[0].SendBy)
	}
	res := r.resolver()
	if !res.ReleasableAt(rows[0]).IsZero() {
		t.Fatal("a row with no deadline has a release time")
	}
	res.Now = nil
	if _, err := res.Resolve(context.Background(), rows); !errors.Is(err, ErrNoClock) {
		t.Fatalf("no clock: %v, want ErrNoClock", err)
	}
	if st := r.fresh(t, rows)[0].State; st != payment.InDoubt {
		t.Fatalf("a resolver with no clock left the row %s", st)
	}
	res = r.resolver()
	out, err := res.Resolve(context.Background(), rows)
	if err != nil || out.Released != 1 {
		t.Fatalf("outcome %+v, %v; want the row released", out, err)
	}
}
