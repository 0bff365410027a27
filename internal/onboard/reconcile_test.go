package onboard

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/report/reporttest"
	"github.com/batchd/batchd/internal/sandbox"
)

// TestReconcile: pending sources are read at the service; one the
// customer verified becomes Verified, one whose verification failed
// becomes verification_failed with the bank-linking step, and one still
// pending is tracked, then, after five whole business days, stuck. The
// day's report lists them all with an action, and is delivered.
func TestReconcile(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, friday, sandbox.Options{})
		b := r.load(payment.KindSources, "micro.csv",
			micro(customer("ned"), "31300001"), micro(customer("ola"), "31300002"), micro(customer("pia"), "31300003"))
		mustRun(t, r.runner(Options{}))
		src := r.rows(b.ID)
		ctx := context.Background()
		ned := r.deposits(src[0].SourceID)
		if _, err := r.api.Verify(ctx, src[0].SourceID, ned[0], ned[1]); err != nil {
			t.Fatal(err)
		}
		pia := r.deposits(src[2].SourceID)
		for range 3 {
			r.api.Verify(ctx, src[2].SourceID, pia[0], pia[0]) // wrong: the deposits differ
		}

		dir, out := t.TempDir(), dirOutbox{t.TempDir()}
		opts := Options{ReportsDir: dir, Reports: report.Destination{Outbox: out, Dir: "reports"},
			Formats: []report.Format{report.CSV, report.XLSX}}
		r.clk.Advance(3 * 24 * time.Hour) // Monday 2026-06-08
		sum, err := r.runner(opts).Reconcile(ctx, r.clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		if sum.Read != 3 || sum.Changed != 2 || sum.Stuck != 0 || sum.Calls != 3 || sum.RunDate.String() != "2026-06-08" {
			t.Errorf("summary %+v", sum)
		}
		rows := r.rows(b.ID)
		if rows[0].Status != funding.StatusVerified || rows[1].Status != funding.StatusPending || rows[2].Status != funding.StatusVerificationFailed {
			t.Fatalf("statuses %s %s %s", rows[0].Status, rows[1].Status, rows[2].Status)
		}
		name := "funding-sources-2026-06-08"
		if len(sum.Reports) != 2 || sum.Reports[0] != filepath.Join(dir, name+".csv") {
			t.Fatalf("reports %q", sum.Reports)
		}
		for _, ext := range []string{".csv", ".xlsx"} {
			if _, err := os.Stat(filepath.Join(out.dir, "reports", name+ext)); err != nil {
				t.Errorf("not delivered: %v", err)
			}
		}
		csv := reporttest.ReadCSV(t, sum.Reports[0])
		if got := strings.Join(csv[0], ","); got != strings.Join(SourcesTable.Names(), ",") {
			t.Fatalf("header %q", got)
		}
		reporttest.Check(t, sum.Reports[1], SourcesTable)
		line := func(rec []string, col string) string {
			for i, c := range SourcesTable.Names() {
				if c == col {
					return rec[i]
				}
			}
			t.Fatalf("no column %s", col)
			return ""
		}
		want := []struct{ kind, prev, status, action string }{
			{LineChanged, "pending", "verified", "none: the account is verified for debits and credits"},
			{LineTracked, "", "pending", StepSendVerification},
			{LineChanged, "pending", "verification_failed", StepVerificationEnded},
		}
		for i, w := range want {
			rec := csv[i+1]
			if line(rec, "kind") != w.kind || line(rec, "previous_status") != w.prev || line(rec, "status") != w.status ||
				line(rec, "action") != w.action || line(rec, "created") != "2026-06-05" || line(rec, "business_days") != "0" ||
				line(rec, "funding_source_id") != src[i].SourceID || line(rec, "file") != "micro.csv" ||
				line(rec, "account") != "****000"+string(rune('1'+i)) {
				t.Errorf("line %d: %q", i+1, rec)
			}
		}

		// Tuesday 2026-06-16: six whole business days since Friday the 5th.
		r.clk.Advance(8 * 24 * time.Hour)
		sum, err = r.runner(opts).Reconcile(ctx, r.clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		if sum.Read != 1 || sum.Changed != 0 || sum.Stuck != 1 || sum.Calls != 1 {
			t.Errorf("summary %+v", sum)
		}
		csv = reporttest.ReadCSV(t, filepath.Join(dir, "funding-sources-2026-06-16.csv"))
		if len(csv) != 2 || line(csv[1], "kind") != LineStuck || line(csv[1], "business_days") != "6" ||
			!strings.Contains(line(csv[1], "action"), "send a verification file") ||
			!strings.Contains(line(csv[1], "detail"), "6 business days since it was created on 2026-06-05") {
			t.Errorf("stuck report %q", csv)
		}
	})
}

// TestReconcileMissing: a tracked source the service does not know is
// reported as missing with an action, and its row keeps its status.
func TestReconcileMissing(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, friday, sandbox.Options{})
		b := r.load(payment.KindSources, "micro.csv", micro(customer("quin"), "51500001"))
		mustRun(t, r.runner(Options{}))
		row := r.rows(b.ID)[0]
		// Another rig's service: the ledger's source is unknown there.
		other := newRig(t, backend, friday, sandbox.Options{})
		sum, err := New(r.db, other.svc, Options{Now: r.clk.Now}).Reconcile(context.Background(), r.clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		if sum.Missing != 1 || sum.Read != 0 || sum.Changed != 0 {
			t.Errorf("summary %+v", sum)
		}
		if got := r.rows(b.ID)[0]; got.Status != row.Status {
			t.Errorf("status %s, was %s", got.Status, row.Status)
		}
	})
}
