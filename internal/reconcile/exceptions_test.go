package reconcile

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/sandbox"
)

// TestChecksOutsideTheWindowAreFetched: a check not final but older than
// the lookback is not in the list; it is fetched by id, its status
// recorded, and reported stuck. A check the service never had is reported
// missing only after a 404.
func TestChecksOutsideTheWindowAreFetched(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		b := e.load("old.csv", pay(1111, 16, "Old Open"), pay(2222, 16, "Never There"), pay(3333, 16, "Old Final"))
		ks := e.keys(b)
		open := e.submit(ks[0])
		if _, err := e.db.Send(ks[1]); err != nil {
			t.Fatal(err)
		}
		ghost := "5c4b3a29-1807-4f6e-9d5c-4b3a29180700"
		if _, err := e.db.Created(ks[1], payment.CheckResult{CheckID: ghost, Status: payment.StatusInProcess, Created: monday()}); err != nil {
			t.Fatal(err)
		}
		final := e.submit(ks[2])
		e.deposit(final)
		if _, err := e.db.ObserveStatuses([]payment.Observation{{Key: ks[2], Status: payment.StatusDeposited}}, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		e.advance(90)
		sum := e.run(Options{LookbackDays: 60})
		today := DateOf(monday().AddDate(0, 0, 90))
		if sum.Window.From != today.AddDays(-60) {
			t.Errorf("window %s does not start 60 days back", sum.Window)
		}
		if sum.ChecksSeen != 0 || sum.Confirmed != 2 || sum.Matched != 1 || sum.Missing != 1 || sum.Stuck != 1 || sum.StatusChanges != 1 {
			t.Fatalf("summary %+v", sum)
		}
		r, _ := e.db.Row(ks[0])
		if r.CheckStatus != payment.StatusPrinted {
			t.Errorf("status of the fetched check: %s", r.CheckStatus)
		}
		excs := table(t, e.reportPath("exceptions", today))
		if len(excs) != 2 || excs[0]["kind"] != KindMissing || excs[0]["check_id"] != ghost ||
			excs[1]["kind"] != KindStuck || excs[1]["check_id"] != open {
			t.Fatalf("exceptions %v", excs)
		}
		// The deposited check outside the window is neither fetched nor shown.
		for _, l := range table(t, e.reportPath("status", today)) {
			if l["check_id"] == final {
				t.Errorf("a final check outside the window is on the status report")
			}
		}
	})
}

// TestStuckSkipsHolidays: a check created the day before Thanksgiving is
// stuck after five whole business days, and Thanksgiving is not one.
func TestStuckSkipsHolidays(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		wednesday := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
		e := newEnv(t, backend, wednesday, nil)
		e.submit(e.keys(e.load("thanks.csv", pay(5000, 16, "Turkey")))[0])
		e.advance(8) // Thursday 3 December: Fri, Mon, Tue, Wed have passed
		if sum := e.run(Options{}); sum.Stuck != 0 || sum.StatusChanges != 1 {
			t.Fatalf("thursday: %+v", sum)
		}
		e.advance(1) // Friday 4 December: five business days have passed
		sum := e.run(Options{})
		if sum.Stuck != 1 {
			t.Fatalf("friday: %+v", sum)
		}
		excs := table(t, e.reportPath("exceptions", Date{2026, 12, 4}))
		if len(excs) != 1 || !strings.Contains(excs[0]["detail"], "printed for 5 business days since it was created on 2026-11-25") {
			t.Errorf("exceptions %v", excs)
		}
		// A week's patience: not stuck with stuck_after_business_days 6.
		if sum := e.run(Options{StuckAfterBusinessDays: 6}); sum.Stuck != 0 {
			t.Errorf("stuck after 6 business days: %+v", sum)
		}
	})
}

// TestRowsInDoubt: a listed check resolves the row in doubt whose label,
// number and amount it carries. One with the label and number but another
// amount does not: the row stays in doubt and both are reported. A check
// that carries the identity of a row that already has its check is a
// possible duplicate payment.
func TestRowsInDoubt(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		ctx := context.Background()
		b := e.load("doubt.csv", pay(1000, 16, "Resolves"), pay(2000, 16, "Wrong Amount"), pay(3000, 16, "Nothing Made"), pay(4000, 16, "Paid Twice"))
		ks := e.keys(b)
		lose := func(k payment.RowKey, change func(*payment.Row)) string {
			row, err := e.db.Send(k)
			if err != nil {
				t.Fatal(err)
			}
			id := ""
			if change != nil {
				change(row)
				req := request(row)
				c, err := e.api.CreateCheck(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				id = c.CheckID
			}
			if _, err := e.db.Doubt(k, "answer lost"); err != nil {
				t.Fatal(err)
			}
			return id
		}
		resolved := lose(ks[0], func(*payment.Row) {})
		wrong := lose(ks[1], func(r *payment.Row) { r.Payment.Amount = 2001 })
		lose(ks[2], nil)
		first := e.submit(ks[3])
		r3, _ := e.db.Row(ks[3])
		dup := e.outside(r3.Label, r3.Number, 4000)

		sum := e.run(Options{})
		if sum.Resolved != 1 || sum.InDoubt != 2 || sum.Mismatched != 1 || sum.Unknown != 1 {
			t.Fatalf("summary %+v", sum)
		}
		if r, _ := e.db.Row(ks[0]); r.State != payment.Submitted || r.CheckID != resolved {
			t.Errorf("row 2: %s %s", r.State, r.CheckID)
		}
		if r, _ := e.db.Row(ks[1]); r.State != payment.InDoubt {
			t.Errorf("row 3 with another amount: %s", r.State)
		}
		kinds := map[string]map[string]string{}
		for _, x := range table(t, e.reportPath("exceptions", Date{2026, 3, 2})) {
			kinds[x["kind"]+" "+x["line"]] = x
		}
		if x := kinds["unknown "]; x["check_id"] != dup || !strings.Contains(x["detail"], first) || !strings.Contains(x["action"], "duplicate") {
			t.Errorf("possible duplicate: %v", x)
		}
		if x := kinds["mismatch 3"]; x["check_id"] != wrong || !strings.Contains(x["detail"], "amount 20.01") {
			t.Errorf("amount mismatch of a row in doubt: %v", x)
		}
		if x := kinds["in_doubt 3"]; x == nil {
			t.Errorf("row 3 not reported in doubt: %v", kinds)
		}
		if x := kinds["in_doubt 4"]; x == nil || !strings.Contains(x["detail"], "answer lost") || !strings.Contains(x["action"], "do not resend") {
			t.Errorf("row 4: %v", x)
		}
	})
}

// TestAuthFailureStopsTheRun: a key the service refuses ends the run at
// once with a clear error, and writes no report.
func TestAuthFailureStopsTheRun(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		sb := sandbox.New(sandbox.Options{Keys: []sandbox.Key{{Value: testKey}}})
		srv := httptest.NewServer(sb)
		defer srv.Close()
		api, err := echeck.New(apiwire.Options{BaseURL: srv.URL, Key: "sk_test_revoked", HTTPClient: srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = e.runner(echeck.NewService(api), Options{Retry: retry.Policy{Base: time.Second}}).Run(context.Background(), Window{})
		if !errors.Is(err, payment.ErrKeyRefused) || !strings.Contains(err.Error(), "HTTP 401") {
			t.Fatalf("error %v", err)
		}
		if time.Since(start) > 500*time.Millisecond {
			t.Errorf("a refused key was retried")
		}
		if sb.Stats().Requests != 1 {
			t.Errorf("%d requests reached the service after a 401", sb.Stats().Requests)
		}
		if entries, _ := os.ReadDir(e.dir); len(entries) != 0 {
			t.Errorf("reports written after a refused key")
		}
		if strings.Contains(err.Error(), "sk_test_revoked") {
			t.Errorf("the key leaked into the error")
		}
	})
}
