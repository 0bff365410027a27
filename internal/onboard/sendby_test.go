package onboard

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ach"
	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/rowrun"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/state"
)

// stallingLimiter lets every request go, the first only after the clock
// moved by pause: a wait for the rate limiter that outlasts the send
// window, as a leader paused mid-send would.
type stallingLimiter struct {
	clk   *clock
	pause time.Duration
	once  sync.Once
}

func (l *stallingLimiter) Wait(ctx context.Context) error {
	l.once.Do(func() { l.clk.Advance(l.pause) })
	return ctx.Err()
}

func (l *stallingLimiter) Throttled() {}

// TestLateCreateIsNotSent: on a ledger that sets send-by deadlines, a
// customer's create whose deadline passed while it waited is not sent:
// the row goes in doubt, is looked up only after the deadline plus the
// margin, and is then sent once. The service ends with one customer and
// one source.
func TestLateCreateIsNotSent(t *testing.T) {
	const window = 10 * time.Second
	clk := &clock{t: friday}
	db := ledgertest.Open(t, ledgertest.Bbolt, state.Options{Now: clk.Now, SendWindow: window})
	sb := sandbox.New(sandbox.Options{Now: clk.Now})
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	api, err := ach.New(apiwire.Options{BaseURL: srv.URL, Key: testKey, Timeout: 5 * time.Second,
		Limiter: &stallingLimiter{clk: clk, pause: window + time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, clk: clk, db: db, sb: sb, srv: srv, api: api, svc: ach.NewFundingService(api, "plaid")}
	b := r.load(payment.KindSources, "late.csv", onDemand(customer("ann"), fixtureRouting, fixtureAccount(1)))

	sum, err := r.runner(Options{}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	row := r.rows(b.ID)[0]
	var dropped bool
	for _, h := range row.History {
		dropped = dropped || h.Note == rowrun.DropReason
	}
	if !dropped {
		t.Errorf("the late create was not dropped; history %+v", row.History)
	}
	st := sb.Stats()
	if row.State != payment.Submitted || st.Customers != 1 || st.FundingSources != 1 || sum.Resent != 1 {
		t.Fatalf("row %s, %d customers, %d sources, %d resent; want submitted, 1, 1, 1 (error %q)",
			row.State, st.Customers, st.FundingSources, sum.Resent, row.Error)
	}
	if got := clk.Now(); got.Before(row.History[0].At.Add(window + time.Second)) {
		t.Errorf("clock at %v: the lookup cannot have waited for the deadline", got)
	}
}
