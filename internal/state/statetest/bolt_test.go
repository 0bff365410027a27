package statetest_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/state/statetest"
)

// TestBolt runs the conformance suite on the bbolt ledger.
func TestBolt(t *testing.T) {
	statetest.Run(t, statetest.Backend{Name: "bbolt", New: newBoltLedger})
}

// boltLedger is a ledger in a state directory of its own.
type boltLedger struct{ dir string }

func newBoltLedger(t testing.TB) statetest.Ledger {
	// A short directory: the snapshot socket's path must fit a sockaddr.
	dir, err := os.MkdirTemp("", "ledger")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return &boltLedger{dir: dir}
}

func (l *boltLedger) Open(t testing.TB, opts state.Options) *state.DB {
	t.Helper()
	d, err := state.Open(l.dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func (l *boltLedger) Snapshot(t testing.TB, d *state.DB) statetest.Snapshot {
	t.Helper()
	path := filepath.Join(t.TempDir(), "snap.db")
	if _, err := d.Backup(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func (l *boltLedger) Restore(t testing.TB, snap statetest.Snapshot, at time.Time) *state.RestoreMark {
	t.Helper()
	res, err := state.Restore(l.dir, snap.(string), state.RestoreOptions{Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Report.OK() {
		t.Fatalf("the restored ledger: %v", res.Report.Faults)
	}
	return &res.Mark
}

// Older copies the ledger file as it is now (no write is in progress, and
// bbolt's file is whole after each commit), as a copy kept aside would.
func (l *boltLedger) Older(t testing.TB, d *state.DB) statetest.Snapshot {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(l.dir, state.FileName))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "older.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// PutBack closes d and copies the older file over the ledger: the open
// file is locked, so there is no rewind in place under a running batchd.
func (l *boltLedger) PutBack(t testing.TB, d *state.DB, older statetest.Snapshot, _ bool, opts state.Options) (*state.DB, error) {
	t.Helper()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(older.(string))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.dir, state.FileName), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := state.Open(l.dir, opts)
	if err == nil {
		t.Cleanup(func() { db.Close() })
	}
	return db, err
}
