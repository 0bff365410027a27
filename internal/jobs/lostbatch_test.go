package jobs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/state"
)

// TestBatchLostByARestore is issue 27's "a batch the rewind lost
// entirely", end to end on real jobs: pay.csv is ingested and paid after
// the snapshot the ledger is then restored from, so the restored ledger
// has no trace of it while its file is in the archive and its two checks
// exist at the service. Reconcile reports them as lost_batch (not
// unknown, whose action is to void) and records them; pay.csv dropped
// again is refused, naming them, and the service still holds two checks.
func TestBatchLostByARestore(t *testing.T) {
	c := newCycle(t)
	ctx := context.Background()
	snap := filepath.Join(t.TempDir(), "before.db")
	if _, err := c.env.DB.Backup(snap); err != nil {
		t.Fatal(err)
	}
	const pay = "amount,memo,name,email,bank_routing,bank_account\n" +
		"12.34,rent,Ann,ann@example.com,999900001,1111000016\n" +
		"56.78,fee,Bob,bob@example.com,999900001,1111000008\n"
	c.drop("pay.csv", pay)
	if out, err := c.env.Ingest(ctx); err != nil || len(out) != 1 || out[0].Outcome != ingest.Accepted {
		t.Fatalf("ingest: %+v %v", out, err)
	}
	if sum, _, err := c.env.Submit(ctx); err != nil || sum.Created != 2 {
		t.Fatalf("submit: %+v %v", sum, err)
	}
	lostInstance := c.env.DB.Instance()

	c.clk.Advance(time.Hour)
	cfg := c.env.Cfg
	if err := c.env.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := state.Restore(cfg.StateDir, snap, state.RestoreOptions{Now: c.clk.Now}); err != nil {
		t.Fatal(err)
	}
	c.env = openEnv(t, ledgertest.Bbolt, cfg, c.clk.Now)
	if bs, _ := c.env.DB.Batches(); len(bs) != 0 || c.env.DB.Instance() == lostInstance {
		t.Fatalf("the restored ledger has batches %+v, instance %s", bs, c.env.DB.Instance())
	}

	sum, err := c.env.Reconcile(ctx, nil)
	if err != nil || sum.LostBatch != 2 || sum.Unknown != 0 {
		t.Fatalf("reconcile: %+v %v", sum, err)
	}
	exc := c.outboxCSV("exceptions-")
	kind, action := col(exc[0], "kind"), col(exc[0], "action")
	for _, rec := range exc[1:] {
		if rec[kind] != "lost_batch" || strings.Contains(rec[action], "void it at the service") {
			t.Fatalf("exception %v", rec)
		}
	}
	lost, err := c.env.DB.LostChecks()
	if err != nil || len(lost) != 2 {
		t.Fatalf("recorded lost checks %+v %v", lost, err)
	}

	c.drop("pay.csv", pay)
	out, err := c.env.Ingest(ctx)
	if err != nil || len(out) != 1 || out[0].Outcome != ingest.LostBatch {
		t.Fatalf("the lost batch's file dropped again: %+v %v", out, err)
	}
	note, err := os.ReadFile(out[0].MovedTo + ".error.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lost {
		if !strings.Contains(string(note), "check "+l.ID+", number "+l.Number+", amount "+l.Amount.String()) {
			t.Errorf("the refusal does not name check %s: %s", l.ID, note)
		}
	}
	if !strings.Contains(string(note), "archive/"+c.clk.Now().Add(-time.Hour).Format(time.DateOnly)+"/pay.csv") {
		t.Errorf("the refusal does not name the archived copy: %s", note)
	}
	if s, _, err := c.env.Submit(ctx); err != nil || s.Created != 0 {
		t.Fatalf("submit after the refusal: %+v %v", s, err)
	}
	page, err := c.api.ListChecks(ctx, echeck.ListParams{Limit: 100})
	if err != nil || len(page.Checks) != 2 {
		t.Fatalf("the service holds %d checks (%v), want the two of the lost batch", len(page.Checks), err)
	}
}
