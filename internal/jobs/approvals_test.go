package jobs

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/payee"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/testsshd"
)

// An approvals file releases the held row whose new account's last four
// digits it names, refuses a line with other digits and one naming no
// row, and reports each line; the released row is sent exactly once, and
// the same approvals dropped again are a duplicate.
func TestApprovalsFileReleasesHeldRows(t *testing.T) {
	sshd := testsshd.Start(t)
	ctx := context.Background()
	c, logs := payeeCycle(t, sshd, payee.Hold)
	c.drop("second.csv", "amount,memo,name,email,bank_routing,bank_account\n"+
		"20.00,inv 2,Ada Lovelace,ada@example.com,999900001,"+newAccount+"\n"+
		"21.00,inv 3,Ada Lovelace,ada@example.com,999900001,"+newAccount+"\n")
	if out, err := c.env.Ingest(ctx); err != nil || len(out) != 1 || out[0].Outcome != "accepted" {
		t.Fatalf("ingest second: %+v %v", out, err)
	}
	if sum, _, err := c.env.Submit(ctx); err != nil || sum.Created != 0 || sum.Held != 2 {
		t.Fatalf("submit with held rows: %+v %v", sum, err)
	}

	approvals := "File,Line,Account_Last4,Approved_By,note\n" +
		"second.csv,2,5678,alice,seen on the phone\n" +
		"second.csv,3,1234,bob,\n" +
		"nosuch.csv,2,5678,carol,\n"
	c.drop("approve-1.csv", approvals)
	// Through the daemon's scheduled pickup: the released row asks for a
	// submit run at once.
	pending := 0
	msg, err := Scheduled{Env: c.env, OnPending: func(context.Context) { pending++ }}.Ingest(ctx)
	if err != nil || msg != "1 files accepted (1 rows), 0 not accepted" || pending != 1 {
		t.Fatalf("ingest approvals: %q %v, %d submit runs asked for", msg, err, pending)
	}
	if moved, _ := filepath.Glob(filepath.Join(c.path("archive"), "*", "approve-1.csv")); len(moved) != 1 {
		t.Fatalf("approvals file not archived: %v", moved)
	}
	recs := c.outboxCSV("approve-1.csv.results")
	if len(recs) != 4 {
		t.Fatalf("results report %q", recs)
	}
	want := []struct{ result, reason string }{
		{"released", "released second.csv line 2"},
		{"refused", "the last four digits of the new account are not 1234 (it is ****5678)"},
		{"refused", "no row at nosuch.csv line 2"},
	}
	for i, w := range want {
		row := recs[i+1]
		if row[col(recs[0], "result")] != w.result || !strings.Contains(row[col(recs[0], "reason")], w.reason) {
			t.Errorf("results line %d: %q, want %s: %s", i+2, row, w.result, w.reason)
		}
	}

	sum, _, err := c.env.Submit(ctx)
	if err != nil || sum.Created != 1 || sum.Held != 1 {
		t.Fatalf("submit after approvals: %+v %v", sum, err)
	}
	if n := checksAt(t, c); n != 2 {
		t.Fatalf("sandbox holds %d checks, want 2", n)
	}
	if sum, _, err := c.env.Submit(ctx); err != nil || sum.Created != 0 || sum.Attempts != 0 {
		t.Fatalf("a later submit: %+v %v", sum, err)
	}
	bs, _ := c.env.DB.Batches()
	var second uint64
	for _, b := range bs {
		if b.File == "second.csv" {
			second = b.ID
		}
	}
	if r, err := c.env.DB.Row(payment.RowKey{Batch: second, Line: 3}); err != nil || r.State != payment.Held {
		t.Fatalf("line 3 should still be held: %+v %v", r, err)
	}

	// The same content again, under another name: a duplicate, nothing applied.
	c.drop("approve-2.csv", approvals)
	out, err := c.env.Ingest(ctx)
	if err != nil || len(out) != 1 || out[0].Outcome != ingest.Duplicate || out[0].Kind != payment.KindApprovals {
		t.Fatalf("ingest approvals again: %+v %v", out, err)
	}
	noFullAccount(t, c, logs.String())
}
