package state

import (
	boltkv "github.com/batchd/batchd/internal/state/bolt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
	bolt "go.etcd.io/bbolt"
)

// TestEventsSurviveReopenAndRestore: the dedupe memory is in the ledger,
// and in its snapshots.
func TestEventsSurviveReopenAndRestore(t *testing.T) {
	dir := t.TempDir()
	d, _ := hookLedger(t, dir)
	submitted(t, d, "a.csv", "chk-1", payment.StatusInProcess)
	e := checkEvent("chk-1", payment.StatusPrinted)
	record(t, d, e)
	snap := filepath.Join(t.TempDir(), "snap.db")
	if _, err := d.Backup(snap); err != nil {
		t.Fatal(err)
	}
	d.Close()
	d, _ = hookLedger(t, dir)
	if !record(t, d, e) {
		t.Fatal("after a reopen the event was recorded again")
	}
	d.Close()
	res, err := Restore(dir, snap, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Events != 1 {
		t.Errorf("the restored ledger's check counts %d events, want 1", res.Report.Events)
	}
	d, _ = hookLedger(t, dir)
	if !record(t, d, e) {
		t.Fatal("after a restore the event was recorded again")
	}
}

func TestPruneEvents(t *testing.T) {
	defer func(n int) { eventChunk = n }(eventChunk)
	eventChunk = 2 // prune and read in several transactions
	d, clock := hookLedger(t, t.TempDir())
	submitted(t, d, "a.csv", "chk-1", payment.StatusInProcess)
	start := clock.now()
	statuses := []payment.Status{payment.StatusInReview, payment.StatusPrinted, payment.StatusDeposited, payment.StatusVoid, payment.StatusDeleted}
	for _, s := range statuses {
		record(t, d, checkEvent("chk-1", s))
		clock.add(time.Hour)
	}
	if n, err := d.PruneEvents(time.Time{}); n != 0 || err != nil {
		t.Fatalf("PruneEvents(zero) = %d, %v", n, err)
	}
	n, err := d.PruneEvents(start.Add(3 * time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("PruneEvents = %d, %v; want 3", n, err)
	}
	left := events(t, d)
	if len(left) != 2 || left[0].Status != "void" || left[1].Status != "deleted" {
		t.Fatalf("events left: %+v", left)
	}
	// A pruned event delivered again is recorded anew, and changes nothing.
	if record(t, d, checkEvent("chk-1", payment.StatusPrinted)) {
		t.Fatal("a pruned event is still remembered")
	}
	if o := outcomeOf(t, d, "ev-chk-1-printed"); o != EventUnchanged {
		t.Fatalf("a pruned event delivered again: %s, want unchanged", o)
	}
	if n, err := d.PruneEvents(clock.add(time.Hour)); n != 3 || err != nil || len(events(t, d)) != 0 {
		t.Fatalf("PruneEvents(all) = %d, %v", n, err)
	}
	wantInvariants(t, d)
}

func TestCheckWebhookEvents(t *testing.T) {
	dir := t.TempDir()
	d, _ := hookLedger(t, dir)
	submitted(t, d, "a.csv", "chk-1", payment.StatusInProcess)
	if rep := wantInvariants(t, d); rep.Events != 0 {
		t.Fatalf("a ledger without events counts %d", rep.Events)
	}
	record(t, d, checkEvent("chk-1", payment.StatusPrinted))
	record(t, d, checkEvent("other", payment.StatusPrinted))
	d.Close()
	path := filepath.Join(dir, FileName)
	rep, err := CheckFile(path)
	if err != nil || !rep.OK() || rep.Events != 2 {
		t.Fatalf("check of a ledger with events: %+v, %v", rep, err)
	}
	bd, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bd.Update(func(btx *bolt.Tx) error {
		tx := boltkv.Tx(btx)
		ev := tx.Bucket(bucketHookEvents)
		if err := ev.Put([]byte("ev-chk-1-printed"), []byte(`{"received":"2026-03-02T09:00:00Z","kind":"check","outcome":"applied"}`)); err != nil {
			return err
		}
		return ev.Put([]byte("ev-other-printed"), []byte(`{not json`))
	})
	bd.Close()
	if err != nil {
		t.Fatal(err)
	}
	rep, err = CheckFile(path)
	if err != nil {
		t.Fatal(err)
	}
	faults := make([]string, len(rep.Faults))
	for i, f := range rep.Faults {
		faults[i] = f.String()
	}
	all := strings.Join(faults, "\n")
	for _, want := range []string{"webhook event ev-chk-1-printed: was applied but names no check", "webhook event ev-other-printed: does not decode"} {
		if !strings.Contains(all, want) {
			t.Errorf("faults do not say %q:\n%s", want, all)
		}
	}
}
