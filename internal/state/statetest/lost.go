package statetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// Lost batches: a batch loaded and sent after the snapshot the ledger
// went back to is gone, and its checks carry a label the ledger no longer
// knows. The ledger recognises such labels and keeps their checks.
var lostCases = []testCase{
	{"LabelsOfALostBatch", testLostLabels},
	{"RecordedChecks", testRecordLost},
	{"PrunedIsNotLost", testPrunedIsNotLost},
}

func testLostLabels(t *testing.T, be Backend) {
	needRestore(t, be)
	d := open(t, be)
	kept := load(t, d.DB, "kept.csv", 1)
	var lost payment.Batch
	d.restore(func() {
		lost = load(t, d.DB, "lost.csv", 2)
		submit(t, d.DB, key(lost, 2), "chk-lost", payment.StatusInProcess)
	}, d.clock.Add(time.Hour))
	if lost.ID != kept.ID+1 || !strings.Contains(lost.Label, "-") {
		t.Fatalf("batches %d %q and %d %q", kept.ID, kept.Label, lost.ID, lost.Label)
	}
	again := load(t, d.DB, "again.csv", 1) // takes the lost batch's number, under the new instance
	if again.ID != lost.ID || again.Label == lost.Label {
		t.Fatalf("the batch after the restore is %d %q; the lost one was %d %q", again.ID, again.Label, lost.ID, lost.Label)
	}
	ahead := payment.BatchLabel(d.Instance(), again.ID+5) // never given out: a rewind not yet detected
	stranger := payment.BatchLabel("abcdef", lost.ID)     // no instance of this ledger
	shouted := "  " + strings.ToUpper(lost.Label) + " "   // as a service may echo it
	labels := []string{kept.Label, lost.Label, again.Label, ahead, stranger, shouted, "Payroll-Nov", ""}
	got, err := d.LostLabels(labels)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{lost.Label: true, ahead: true, shouted: true}
	for _, l := range labels {
		if got[l] != want[l] {
			t.Errorf("LostLabels(%q) = %v, want %v", l, got[l], want[l])
		}
	}
}

func testRecordLost(t *testing.T, be Backend) {
	d := open(t, be)
	if cs, err := d.LostChecks(); err != nil || len(cs) != 0 {
		t.Fatalf("a fresh ledger has lost checks: %v %v", cs, err)
	}
	first := d.clock.Now()
	c := payment.LostCheck{ID: "chk-1", Label: "batchd-0a0b0c-7", Number: "0012", Amount: 1234,
		Status: payment.StatusInProcess, Created: first.Add(-time.Hour), Instance: "0a0b0c", Batch: 7, Recorded: first}
	if err := d.RecordLost([]payment.LostCheck{c}); err != nil {
		t.Fatal(err)
	}
	later := c
	later.Status, later.Recorded = "deposited", d.clock.Add(24*time.Hour)
	other := payment.LostCheck{ID: "chk-2", Label: "batchd-0a0b0c-7", Number: "13", Amount: 99, Instance: "0a0b0c", Batch: 7, Recorded: later.Recorded}
	b := load(t, d.DB, "pay.csv", 1)
	submit(t, d.DB, key(b, 2), "chk-owned", payment.StatusInProcess)
	owned := payment.LostCheck{ID: "chk-owned", Label: b.Label, Amount: 1}
	for _, bad := range []payment.LostCheck{{Label: "batchd-0a0b0c-7"}, {ID: "chk-3", Label: "Payroll-Nov"}, owned} {
		if err := d.RecordLost([]payment.LostCheck{other, bad}); err == nil {
			t.Fatalf("%+v was recorded", bad)
		}
	}
	if cs, err := d.LostChecks(); err != nil || len(cs) != 1 {
		t.Fatalf("a refused record left %+v %v", cs, err)
	}
	if err := d.RecordLost([]payment.LostCheck{later, other}); err != nil {
		t.Fatal(err)
	}
	d.reopen()
	cs, err := d.LostChecks()
	if err != nil || len(cs) != 2 {
		t.Fatalf("lost checks %+v %v", cs, err)
	}
	if g := cs[0]; g.ID != "chk-1" || g.Status != "deposited" || !g.Recorded.Equal(first) || g.Amount != 1234 ||
		g.Number != "0012" || !g.Created.Equal(c.Created) || g.Batch != 7 || g.Instance != "0a0b0c" {
		t.Fatalf("chk-1 recorded again: %+v", g)
	}
	if cs[1].ID != "chk-2" || cs[1].Amount != 99 {
		t.Fatalf("chk-2: %+v", cs[1])
	}
	d.invariants()
}

// testPrunedIsNotLost: a batch that prune removed was not lost, under the
// current instance or, after a restore, a previous one (the files bucket
// still names it): its checks, listed by a reconcile over old dates, are
// not a lost batch's.
func testPrunedIsNotLost(t *testing.T, be Backend) {
	d := openPrune(t, be)
	old := load(t, d.DB, "old.csv", 2)
	settle(t, d, old, 0, payment.StatusDeposited, true)
	d.clock.Add(48 * time.Hour)
	var a archiveLog
	sum, err := d.Prune(context.Background(), d.clock.Now(), a.archive)
	if err != nil || !slices.Contains(prunedIDs(sum), old.ID) {
		t.Fatalf("prune: %+v %v", sum, err)
	}
	lostOf := func() bool {
		t.Helper()
		got, err := d.LostLabels([]string{old.Label})
		if err != nil {
			t.Fatal(err)
		}
		return got[old.Label]
	}
	if lostOf() {
		t.Fatalf("pruned batch %s is called lost", old.Label)
	}
	if be.NoRestore != "" {
		return
	}
	d.restore(nil, d.clock.Add(time.Hour))
	if lostOf() {
		t.Fatalf("pruned batch %s of the previous instance is called lost", old.Label)
	}
}
