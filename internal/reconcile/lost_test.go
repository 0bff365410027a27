package reconcile

import (
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
)

// TestLostBatchChecksAreBatchdsOwn: the ledger went back in time after
// batch 2 was ingested and two of its rows were paid, so the ledger has
// no batch 2 while the service has its checks under batchd-<instance>-2.
// Reconcile reports them as checks of a lost batch, never as strangers to
// void, and records them in the ledger for ingest; a check under another
// installation's batch label, or a label of a batch the ledger has, stays
// unknown.
func TestLostBatchChecksAreBatchdsOwn(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		kept := e.load("kept.csv", pay(1000, 16, "Kept"))
		e.submit(e.keys(kept)[0])
		lostLabel := payment.BatchLabel(e.db.Instance(), kept.ID+1)
		lost1 := e.outside(strings.ToUpper(lostLabel), "0000070001", 12345) // as a service may echo it
		lost2 := e.outside(lostLabel, "70002", 678)
		stranger := e.outside(payment.BatchLabel("fedcba", kept.ID+1), "70003", 12345)
		sibling := e.outside(kept.Label, "99", 5) // the label of a batch the ledger has
		sum := e.run(Options{})
		if sum.LostBatch != 2 || sum.Unknown != 2 {
			t.Fatalf("summary: lost_batch %d, unknown %d; want 2 and 2", sum.LostBatch, sum.Unknown)
		}
		kinds := map[string]map[string]string{}
		for _, x := range table(t, e.reportPath("exceptions", DateOf(monday()))) {
			kinds[x["check_id"]] = x
		}
		for _, id := range []string{lost1, lost2} {
			x := kinds[id]
			if x["kind"] != KindLostBatch || !strings.Contains(x["action"], "Do not void it") ||
				!strings.Contains(x["detail"], "batch 2 of ledger instance "+e.db.Instance()) {
				t.Errorf("check %s of the lost batch reported as %v", id, x)
			}
		}
		for _, id := range []string{stranger, sibling} {
			if x := kinds[id]; x["kind"] != KindUnknown {
				t.Errorf("check %s reported as %v, want unknown", id, x)
			}
		}
		cs, err := e.db.LostChecks()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]payment.LostCheck{}
		for _, c := range cs {
			got[c.ID] = c
		}
		if len(got) != 2 || got[lost1].Amount != 12345 || got[lost1].Number != "0000070001" || got[lost1].Batch != kept.ID+1 ||
			got[lost1].Instance != e.db.Instance() || got[lost2].Amount != 678 || got[lost1].Created.IsZero() || !got[lost1].Recorded.Equal(monday()) {
			t.Fatalf("recorded lost checks %+v", cs)
		}
		// A second run records them again, keeping when they were first seen.
		e.clock.add(1)
		if sum := e.run(Options{}); sum.LostBatch != 2 {
			t.Fatalf("second run: lost_batch %d", sum.LostBatch)
		}
		if cs, _ := e.db.LostChecks(); len(cs) != 2 || !cs[0].Recorded.Equal(monday()) {
			t.Fatalf("after a second run: %+v", cs)
		}
	})
}
