package state

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
	boltkv "github.com/batchd/batchd/internal/state/bolt"
	bolt "go.etcd.io/bbolt"
)

// TestPruneEventsInChunks: PruneEvents deletes in transactions of
// eventChunk events; the suite (statetest) tests what it keeps.
func TestPruneEventsInChunks(t *testing.T) {
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
	commits := d.Commits()
	n, err := d.PruneEvents(start.Add(3 * time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("PruneEvents = %d, %v; want 3", n, err)
	}
	if c := d.Commits() - commits; c != 2 {
		t.Errorf("3 events pruned in %d transactions, want 2 of at most %d", c, eventChunk)
	}
	left := events(t, d)
	if len(left) != 2 || left[0].Status != "void" || left[1].Status != "deleted" {
		t.Fatalf("events left: %+v", left)
	}
	if n, err := d.PruneEvents(clock.add(time.Hour)); n != 2 || err != nil || len(events(t, d)) != 0 {
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
