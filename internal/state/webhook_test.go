package state

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
	boltkv "github.com/batchd/batchd/internal/state/bolt"
	"github.com/batchd/batchd/internal/webhook"
	bolt "go.etcd.io/bbolt"
)

// hookClock is a settable clock, safe for Records from many goroutines.
type hookClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *hookClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *hookClock) add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// hookLedger opens a ledger in dir on a clock that starts at 2026-03-02
// 09:00 UTC.
func hookLedger(t *testing.T, dir string) (*DB, *hookClock) {
	t.Helper()
	clock := &hookClock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	d, err := Open(dir, Options{Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, clock
}

// submitted loads one payment row and gives it check id in status.
func submitted(t *testing.T, d *DB, name, id string, status payment.Status) payment.RowKey {
	t.Helper()
	b := load(t, d, name, 1)
	k := payment.RowKey{Batch: b.ID, Line: 2}
	if _, err := d.Send(k); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Created(k, payment.CheckResult{CheckID: id, Status: status}); err != nil {
		t.Fatal(err)
	}
	return k
}

// checkEvent is a check.changed event; its id tells check and status apart.
func checkEvent(check string, status payment.Status) webhook.Event {
	return webhook.Event{ID: "ev-" + check + "-" + string(status), Name: "check.changed", Kind: webhook.KindCheck,
		CheckID: check, CheckStatus: status, At: time.Date(2026, 3, 2, 8, 59, 0, 0, time.UTC)}
}

func record(t *testing.T, d *DB, e webhook.Event) (dup bool) {
	t.Helper()
	dup, err := d.Record(context.Background(), e)
	if err != nil {
		t.Fatalf("Record(%s): %v", e.ID, err)
	}
	return dup
}

func events(t *testing.T, d *DB) []EventRecord {
	t.Helper()
	var out []EventRecord
	if err := d.Events(func(e EventRecord) (bool, error) { out = append(out, e); return true, nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func row(t *testing.T, d *DB, k payment.RowKey) *payment.Row {
	t.Helper()
	r, err := d.Row(k)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRecordLedgerFailure(t *testing.T) {
	dir := t.TempDir()
	d, _ := hookLedger(t, dir)
	k := submitted(t, d, "a.csv", "chk-1", payment.StatusInProcess)
	e := checkEvent("chk-1", payment.StatusPrinted)

	// A failure inside the transaction, after the row moved: nothing stays.
	testHookRecordTx = func(webhook.Event) error { return errors.New("disk went away") }
	_, err := d.Record(context.Background(), e)
	testHookRecordTx = nil
	if !errors.Is(err, payment.ErrLedger) || !strings.Contains(err.Error(), "disk went away") {
		t.Fatalf("Record with a failing commit = %v, want a ledger error", err)
	}
	if r := row(t, d, k); r.CheckStatus != payment.StatusInProcess || !r.HeardAt.IsZero() || len(events(t, d)) != 0 {
		t.Fatalf("a failed Record left an effect: %+v, %d events", r, len(events(t, d)))
	}
	// The service delivers it again, and now it is applied, not a duplicate.
	if record(t, d, e) || row(t, d, k).CheckStatus != payment.StatusPrinted {
		t.Fatal("the redelivery after a failure was not applied")
	}

	// A ledger that cannot be written.
	d.Close()
	ro, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	file := boltkv.New(ro)
	readOnly := &DB{store: file, file: file, path: filepath.Join(dir, FileName), now: time.Now}
	_, err = readOnly.Record(context.Background(), checkEvent("chk-1", payment.StatusDeposited))
	var le *payment.LedgerError
	if !errors.Is(err, payment.ErrLedger) || !errors.As(err, &le) || le.Op != "write" {
		t.Fatalf("Record on a read-only ledger = %v, want a write failure wrapping ErrLedger", err)
	}
	// A closed one.
	if _, err := d.Record(context.Background(), checkEvent("chk-1", payment.StatusDeposited)); !errors.Is(err, payment.ErrLedger) {
		t.Fatalf("Record on a closed ledger = %v, want ErrLedger", err)
	}
	// A caller that gave up: nothing is written, and it is no ledger failure.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readOnly.Record(ctx, e); !errors.Is(err, context.Canceled) || errors.Is(err, payment.ErrLedger) {
		t.Fatalf("Record with a done context = %v", err)
	}
}
