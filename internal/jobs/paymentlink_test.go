package jobs

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/paymentlink"
	"github.com/batchd/batchd/internal/reconcile"
)

// A cancel file's checkout_token line deactivates a payment link of
// batchd's: the results say link_cancelled, no payer can pay through it
// any more, and reconcile's links report shows it cancelled beside the
// open one; an unknown token is not_found.
func TestCancelFileClosesAPaymentLink(t *testing.T) {
	c := newCycle(t)
	ctx := context.Background()
	c.drop("invoices.csv", "invoice,amount,memo,payer_name\nINV-1,10.00,first,Ann\nINV-2,12.00,second,Bob\n")
	out, err := c.env.Ingest(ctx)
	if err != nil || len(out) != 1 || out[0].Outcome != ingest.Accepted || out[0].Kind != payment.KindLinks {
		t.Fatalf("ingest links: %+v %v", out, err)
	}
	links, err := paymentlink.Lines(c.env.DB, "")
	if err != nil || len(links) != 2 || links[0].Token == "" || links[0].Outcome != paymentlink.Created {
		t.Fatalf("links: %+v %v", links, err)
	}
	c.drop("close.csv", "checkout_token,reason\n"+links[0].Token+",invoice paid by wire\n"+
		strings.Repeat("0", 8)+"-0000-0000-0000-000000000000,typo\n")
	if out, err := c.env.Ingest(ctx); err != nil || len(out) != 1 || out[0].Kind != payment.KindCancels {
		t.Fatalf("ingest cancels: %+v %v", out, err)
	}
	recs := c.outboxCSV("close.csv.results")
	h := recs[0]
	if len(recs) != 3 || recs[1][col(h, "result")] != "link_cancelled" || recs[1][col(h, "checkout_token")] != links[0].Token ||
		recs[2][col(h, "result")] != "not_found" {
		t.Fatalf("results: %q", recs)
	}
	if code := c.postCode("/_sandbox/paymentlink/pay", map[string]any{"checkout_token": links[0].Token}); code != http.StatusPaymentRequired {
		t.Fatalf("paying a cancelled link: HTTP %d, want 402", code)
	}
	sum, err := c.env.Reconcile(ctx, nil)
	if err != nil || len(sum.Steps) != 1 || sum.Steps[0].Counts["cancelled"] != 1 || sum.Steps[0].Counts["open"] != 1 {
		t.Fatalf("reconcile: %+v %v", sum, err)
	}
}

// ingest.kinds pins a file to a kind by its name: a cancel file that also
// carries an amount column (which its header alone would make a payment
// file's) is applied as cancels; two patterns of different kinds naming
// one file refuse it, saying which.
func TestIngestKindsPinsAFileByName(t *testing.T) {
	c := newCycle(t)
	ctx := context.Background()
	c.env.Cfg.Ingest.Kinds = []string{"stop-*.csv=cancels", "stop-both*.csv=payment-links"}
	c.env.ingest = ingest.New(c.env.DB, c.env.ingestOptions())
	c.drop("stop-1.csv", "check_id,amount,reason\n0c5e0000-0000-0000-0000-000000000000,10.00,typo\n")
	out, err := c.env.Ingest(ctx)
	if err != nil || len(out) != 1 || out[0].Kind != payment.KindCancels || out[0].Outcome != ingest.Accepted {
		t.Fatalf("pinned cancels: %+v %v", out, err)
	}
	c.drop("stop-both.csv", "check_id,reason\n0c5e0000-0000-0000-0000-000000000001,typo\n")
	out, _ = c.env.Ingest(ctx)
	if len(out) != 1 || out[0].Outcome.Accepted() || !strings.Contains(out[0].Detail, "ingest.kinds pins stop-both.csv to two kinds") {
		t.Fatalf("two kinds: %+v", out)
	}
}

// A ledger that forgot a link file (restored from a snapshot taken before
// it, or a database that lost its last writes in a failover) finds the
// links when the same file is dropped again: every line is looked up in
// the link list before a create, so the service still has one link per
// line, and the results report the links made before.
func TestLinkFileAgainAfterTheLedgerForgotIt(t *testing.T) {
	c := newCycle(t)
	ctx := context.Background()
	file := "invoice,amount,memo,payer_name\nINV-1,10.00,first,Ann\nINV-2,12.00,second,Bob\n"
	c.drop("invoices.csv", file)
	if out, err := c.env.Ingest(ctx); err != nil || len(out) != 1 || out[0].Outcome != ingest.Accepted {
		t.Fatalf("ingest links: %+v %v", out, err)
	}
	first, err := paymentlink.Lines(c.env.DB, "")
	if err != nil || len(first) != 2 {
		t.Fatalf("links: %+v %v", first, err)
	}
	cfg := *c.env.Cfg
	cfg.StateDir = filepath.Join(t.TempDir(), "forgetful")
	c.env = openEnv(t, ledgertest.Bbolt, &cfg, c.clk.Now)
	c.drop("invoices-again.csv", file)
	if out, err := c.env.Ingest(ctx); err != nil || len(out) != 1 || out[0].Outcome != ingest.Accepted {
		t.Fatalf("ingest links again: %+v %v", out, err)
	}
	again, err := paymentlink.Lines(c.env.DB, "")
	if err != nil || len(again) != 2 {
		t.Fatalf("links again: %+v %v", again, err)
	}
	for i := range again {
		if again[i].Outcome != paymentlink.Created || again[i].Token != first[i].Token {
			t.Errorf("line %d: %s %s, first made as %s", again[i].Key.Line, again[i].Outcome, again[i].Token, first[i].Token)
		}
	}
	page, err := c.api.ListPaymentLinks(ctx, echeck.ListParams{Limit: 100, Page: 1})
	if err != nil || len(page.Links) != 2 {
		t.Fatalf("the service has %d links, want 2 (%v)", len(page.Links), err)
	}
}

// The links report tells the truth of links the window does not show: a
// link paid before the run's window is paid (the check list's link_id
// filter is asked), and one deactivated at the service by hand is
// inactive, not open.
func TestLinksReportOutsideTheWindow(t *testing.T) {
	c := newCycle(t)
	ctx := context.Background()
	c.drop("invoices.csv", "invoice,amount,memo,payer_name\nINV-1,10.00,first,Ann\nINV-2,12.00,second,Bob\nINV-3,14.00,third,Cy\n")
	if out, err := c.env.Ingest(ctx); err != nil || len(out) != 1 || out[0].Outcome != ingest.Accepted {
		t.Fatalf("ingest links: %+v %v", out, err)
	}
	links, err := paymentlink.Lines(c.env.DB, "")
	if err != nil || len(links) != 3 {
		t.Fatalf("links: %+v %v", links, err)
	}
	c.post("/_sandbox/paymentlink/pay", map[string]any{"checkout_token": links[0].Token})
	if err := c.api.ChangePaymentLinkStatus(ctx, links[1].Token); err != nil {
		t.Fatal(err)
	}
	c.clk.Advance(10 * 24 * time.Hour)
	today := reconcile.DateOf(c.clk.Now())
	sum, err := c.env.Reconcile(ctx, &reconcile.Window{From: today, To: today})
	if err != nil || len(sum.Steps) != 1 {
		t.Fatalf("reconcile: %+v %v", sum, err)
	}
	got := sum.Steps[0].Counts
	if got[paymentlink.StatusPaid] != 1 || got[paymentlink.StatusInactive] != 1 || got[paymentlink.StatusOpen] != 1 || sum.Unknown != 0 {
		t.Errorf("links by status %v (%s), unknown %d", got, sum.Steps[0].Words, sum.Unknown)
	}
	rep := c.outboxCSV("links-")
	if h := rep[0]; rep[1][col(h, "status")] != "paid" || rep[1][col(h, "paid")] != "10.00" || rep[2][col(h, "status")] != "inactive" {
		t.Errorf("links report %q", rep)
	}
}

// With memo_reference off the memo is sent as it is, and the memo and
// amount are what find a link again: a line repeating another's, in the
// file or in an earlier one, is refused, saying why; the others are made.
func TestLinkFileWithoutTheReference(t *testing.T) {
	c := newCycle(t)
	ctx := context.Background()
	c.drop("bare.csv", "invoice,amount,memo,memo_reference\nINV-1,10.00,INV-1,no\nINV-1b,10.00,inv-1,no\nINV-2,12.00,INV-2,no\n")
	if out, err := c.env.Ingest(ctx); err != nil || len(out) != 1 || out[0].Outcome != ingest.Accepted {
		t.Fatalf("ingest: %+v %v", out, err)
	}
	recs := c.outboxCSV("bare.csv.results")
	h := recs[0]
	if len(recs) != 4 || recs[1][col(h, "status")] != "created" || recs[2][col(h, "status")] != "refused" ||
		!strings.Contains(recs[2][col(h, "note")], "line 2 of this file") || recs[3][col(h, "status")] != "created" {
		t.Fatalf("results: %q", recs)
	}
	c.drop("bare-2.csv", "invoice,amount,memo,memo_reference\nINV-2,12.00,INV-2,no\n")
	if out, err := c.env.Ingest(ctx); err != nil || len(out) != 1 || out[0].Outcome != ingest.Accepted {
		t.Fatalf("ingest again: %+v %v", out, err)
	}
	if recs := c.outboxCSV("bare-2.csv.results"); recs[1][col(recs[0], "status")] != "refused" ||
		!strings.Contains(recs[1][col(recs[0], "note")], "an earlier file") {
		t.Errorf("results again: %q", recs)
	}
	page, err := c.api.ListPaymentLinks(ctx, echeck.ListParams{Limit: 100, Page: 1})
	if err != nil || len(page.Links) != 2 {
		t.Fatalf("the service has %d links, want 2 (%v)", len(page.Links), err)
	}
	for _, l := range page.Links {
		if strings.Contains(l.Memo, "[bd") {
			t.Errorf("memo %q carries the reference", l.Memo)
		}
	}
}
