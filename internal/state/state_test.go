package state

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// The ledger's behaviour through its API (transitions, group commit,
// recovery, ownership, funding rows, events, payees, retention, restore
// semantics, the invariants check) is tested by the conformance suite,
// internal/state/statetest, on every backend. The tests in this package
// need the package's internals or bbolt's files: codecs, the file's
// lock, mode and schema, open refusals, snapshots, compaction, damaged
// files, and transaction hooks.

func open(t *testing.T, dir string) *DB {
	t.Helper()
	d, err := Open(dir, Options{LoadChunk: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func pay(acct string, cents int64) payment.Payment {
	return payment.Payment{Amount: 1, Memo: "m", Name: "n", Email: "a@b.c", BankRouting: "999900001", BankAccount: acct}
}

// load commits a batch of n rows on lines 2..n+1 and returns it.
func load(t *testing.T, d *DB, name string, n int) payment.Batch {
	t.Helper()
	l, err := d.BeginBatch(payment.FileMeta{Name: name, SHA256: "sha-" + name, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := l.Add(i+2, pay(fmt.Sprintf("11110000%02d", i%22+1), int64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	b, err := l.Commit(n, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOpenPermissionsAndLock(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir)
	st, err := os.Stat(d.Path())
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("state file mode %v, want 0600", st.Mode().Perm())
	}
	start := time.Now()
	_, err = Open(dir, Options{Timeout: 100 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), "another batchd process") {
		t.Fatalf("unclear lock message: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("second Open hung")
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.update(func(tx kv.Tx) error { return tx.Bucket(bucketMeta).Put(keySchema, u64(SchemaVersion+1)) })
	d.Close()
	if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "newer batchd") {
		t.Fatalf("want refusal of newer schema, got %v", err)
	}
}

// TestCrashMidLoadIsDiscarded: bbolt's Open discards a batch left
// loading (OpenStore leaves that to TakeOver, which the suite tests).
func TestCrashMidLoadIsDiscarded(t *testing.T) {
	dir := t.TempDir()
	d, _ := Open(dir, Options{LoadChunk: 2})
	l, _ := d.BeginBatch(payment.FileMeta{Name: "a.csv", SHA256: "x"})
	for i := 0; i < 5; i++ {
		l.Add(i+2, pay("1111000016", 1)) // flushes two chunks
	}
	d.Close() // the crash: never committed
	d = open(t, dir)
	bs, _ := d.Batches()
	if len(bs) != 0 {
		t.Fatalf("half-loaded batch survived: %+v", bs)
	}
	n := 0
	d.OpenRows(func(*payment.Row) (bool, error) { n++; return true, nil })
	if n != 0 {
		t.Fatalf("%d rows of a discarded batch still open", n)
	}
	if _, err := d.BeginBatch(payment.FileMeta{Name: "a.csv", SHA256: "x"}); err != nil {
		t.Fatalf("content of a discarded batch must be ingestible again: %v", err)
	}
}
