package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
	boltkv "github.com/batchd/batchd/internal/state/bolt"
	bolt "go.etcd.io/bbolt"
)

// Tests of the administrator's kit for the ledger: open refusal, backup,
// restore and check (issue 10).

// ledgerWith makes a ledger in dir with one batch of n rows: rows 2..4
// submitted, row 5 in flight, row 6 in doubt, the rest pending. It
// returns the open DB (closed at the end of the test).
func ledgerWith(t *testing.T, dir string, n int) (*DB, payment.Batch) {
	t.Helper()
	d := open(t, dir)
	b := load(t, d, "pay.csv", n)
	for line := uint32(2); line <= 6; line++ {
		k := payment.RowKey{Batch: b.ID, Line: line}
		if _, err := d.Send(k); err != nil {
			t.Fatal(err)
		}
		switch {
		case line <= 4:
			if _, err := d.Created(k, payment.CheckResult{CheckID: fmt.Sprintf("chk-%d", line), Status: "in_process"}); err != nil {
				t.Fatal(err)
			}
		case line == 6:
			if _, err := d.Doubt(k, "timeout"); err != nil {
				t.Fatal(err)
			}
		}
	}
	return d, b
}

func copyTo(t *testing.T, from, to string) {
	t.Helper()
	raw, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// rowsRoot returns the page size and the root page of the rows bucket of
// the (closed) ledger at path.
func rowsRoot(t *testing.T, path string) (pageSize int, root uint64) {
	t.Helper()
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.View(func(tx *bolt.Tx) error {
		root = uint64(tx.Bucket(bucketRows).Root())
		return nil
	})
	return b.Info().PageSize, root
}

func wantRefusal(t *testing.T, err error, path string, words ...string) {
	t.Helper()
	if !errors.Is(err, ErrUnusable) {
		t.Fatalf("want a refusal (ErrUnusable), got %v", err)
	}
	msg := err.Error()
	for _, w := range append([]string{path, "batchd check", "batchd restore"}, words...) {
		if !strings.Contains(msg, w) {
			t.Fatalf("refusal does not say %q:\n%s", w, msg)
		}
	}
	if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine") {
		t.Fatalf("refusal reads like a crash:\n%s", msg)
	}
}

func TestOpenCreatesOnlyInAFreshDirectory(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir, Options{MustExist: true}); !errors.Is(err, ErrNoLedger) {
		t.Fatalf("MustExist on a fresh directory: %v, want ErrNoLedger", err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("MustExist made a ledger")
	}
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	inst := d.Instance()
	d.Close()
	mk, ok, err := boltkv.ReadMarker(dir)
	if !ok || err != nil || mk.Instance != inst || mk.Generation == 0 {
		t.Fatalf("marker %+v %v %v, want instance %s", mk, ok, err, inst)
	}
	if fi, err := os.Stat(filepath.Join(dir, MarkerName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("marker: %v %v", fi, err)
	}

	// A ledger from before markers existed gets one.
	os.Remove(filepath.Join(dir, MarkerName))
	d, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, ok, _ := boltkv.ReadMarker(dir); !ok {
		t.Fatal("no marker written beside an existing ledger")
	}
}

func TestOpenRefusesALostOrDamagedLedger(t *testing.T) {
	good := t.TempDir()
	d, _ := ledgerWith(t, good, 40)
	d.Close()
	goodFile := filepath.Join(good, FileName)
	marker := filepath.Join(good, MarkerName)
	size := func() int64 { fi, _ := os.Stat(goodFile); return fi.Size() }()

	cases := []struct {
		name  string
		setup func(dir string)
		words []string
	}{
		{"marker without ledger", func(dir string) {
			copyTo(t, marker, filepath.Join(dir, MarkerName))
		}, []string{"is missing", "marker"}},
		{"0-byte ledger", func(dir string) {
			copyTo(t, marker, filepath.Join(dir, MarkerName))
			os.WriteFile(filepath.Join(dir, FileName), nil, 0o600)
		}, []string{"empty (0 bytes)"}},
		{"0-byte ledger, no marker", func(dir string) {
			os.WriteFile(filepath.Join(dir, FileName), nil, 0o600)
		}, []string{"empty (0 bytes)"}},
		{"truncated", func(dir string) {
			copyTo(t, goodFile, filepath.Join(dir, FileName))
			os.Truncate(filepath.Join(dir, FileName), size/2)
		}, []string{"truncated"}},
		{"cut to a few bytes", func(dir string) {
			copyTo(t, goodFile, filepath.Join(dir, FileName))
			os.Truncate(filepath.Join(dir, FileName), 100)
		}, []string{"truncated", "holds 100 bytes"}},
		{"not a ledger", func(dir string) {
			os.WriteFile(filepath.Join(dir, FileName), []byte(strings.Repeat("not a ledger\n", 1000)), 0o600)
		}, []string{"no valid header"}},
		{"byte flipped in the rows' root page", func(dir string) {
			p := filepath.Join(dir, FileName)
			copyTo(t, goodFile, p)
			ps, root := rowsRoot(t, p)
			flip(t, p, int64(root)*int64(ps)+8) // the page's flags
		}, []string{"damaged"}},
		{"another installation's ledger", func(dir string) {
			other := t.TempDir()
			od := open(t, other)
			od.Close()
			copyTo(t, marker, filepath.Join(dir, MarkerName))
			copyTo(t, filepath.Join(other, FileName), filepath.Join(dir, FileName))
		}, []string{"another installation"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(dir)
			before, _ := os.ReadFile(filepath.Join(dir, FileName))
			_, err := Open(dir, Options{})
			wantRefusal(t, err, filepath.Join(dir, FileName), c.words...)
			after, statErr := os.ReadFile(filepath.Join(dir, FileName))
			if string(before) != string(after) || (before == nil) != errors.Is(statErr, os.ErrNotExist) {
				t.Fatal("the refused ledger was changed or created")
			}
		})
	}
}

func flip(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusesAnOlderCopyPutBack(t *testing.T) {
	dir := t.TempDir()
	d, b := ledgerWith(t, dir, 10)
	d.Close()
	path := filepath.Join(dir, FileName)
	old := filepath.Join(t.TempDir(), "copy.db")
	copyTo(t, path, old)

	d = open(t, dir)
	if _, err := d.Send(payment.RowKey{Batch: b.ID, Line: 7}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	copyTo(t, old, path) // "cp" the old copy back
	_, err := Open(dir, Options{})
	wantRefusal(t, err, path, "older copy")
}

func TestBackupWhileTheLedgerIsWritten(t *testing.T) {
	dir := t.TempDir()
	d, b := ledgerWith(t, dir, 300)
	// Another writer goes on while the snapshot is taken: this process
	// holds the ledger, so BackupLedger goes through its socket, just as
	// `batchd backup` does while `batchd submit` runs.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for line := uint32(7); line < 300; line++ {
			select {
			case <-stop:
				return
			default:
			}
			k := payment.RowKey{Batch: b.ID, Line: line}
			if _, err := d.Send(k); err != nil {
				t.Error(err)
				return
			}
			if _, err := d.Created(k, payment.CheckResult{CheckID: fmt.Sprintf("chk-%d", line), Status: "in_process"}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	out := filepath.Join(t.TempDir(), "snaps", "one.db")
	bk, err := BackupLedger(dir, out)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(bk.Via, "batchd process ") {
		t.Fatalf("snapshot came from %q, want the holding process's socket", bk.Via)
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != bk.Size {
		t.Fatalf("snapshot file %v %v, want mode 0600 and %d bytes", fi, err, bk.Size)
	}
	rep, err := CheckFile(out)
	if err != nil || !rep.OK() || rep.Rows != 300 || rep.SnapshotAt.IsZero() || !rep.SnapshotAt.Equal(bk.At) {
		t.Fatalf("snapshot check: %+v %v", rep, err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*"))
	if len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}

	// In-process, as the daemon's backup job takes it.
	bk2, err := d.Backup(filepath.Join(t.TempDir(), "two.db"))
	if err != nil || bk2.Via != "this process" || !bk2.Report.OK() {
		t.Fatalf("DB.Backup: %+v %v", bk2, err)
	}
	// With nobody holding it, from the file.
	d.Close()
	bk3, err := BackupLedger(dir, filepath.Join(t.TempDir(), "three.db"))
	if err != nil || bk3.Via != "the ledger file" || bk3.Report.Rows != 300 {
		t.Fatalf("BackupLedger of a closed ledger: %+v %v", bk3, err)
	}
	if _, err := BackupLedger(dir, filepath.Join(dir, FileName)); err == nil {
		t.Fatal("a backup over the ledger itself was accepted")
	}

	// A snapshot put in place by hand is refused.
	other := t.TempDir()
	copyTo(t, out, filepath.Join(other, FileName))
	_, err = Open(other, Options{})
	wantRefusal(t, err, filepath.Join(other, FileName), "is a snapshot")
}

func TestBackupRefusesADamagedLedger(t *testing.T) {
	dir := t.TempDir()
	d, _ := ledgerWith(t, dir, 40)
	d.Close()
	path := filepath.Join(dir, FileName)
	ps, root := rowsRoot(t, path)
	flip(t, path, int64(root)*int64(ps)+8)
	out := filepath.Join(t.TempDir(), "snap.db")
	if _, err := BackupLedger(dir, out); err == nil || !strings.Contains(err.Error(), "not kept") {
		t.Fatalf("backup of a damaged ledger: %v, want a refusal", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a damaged snapshot was kept")
	}
}

// TestRestoreOfTheFile tests what Restore does with files: its refusals
// (a ledger in use, the ledger itself, a copy that is not a snapshot),
// the wait for the replaced ledger to settle, the replaced ledger kept
// and the marker renewed. What a restore does to rows is the suite's
// (statetest's Restore group).
func TestRestoreOfTheFile(t *testing.T) {
	dir := t.TempDir()
	clock := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	d, err := Open(dir, Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	b := load(t, d, "pay.csv", 3)
	d.Send(payment.RowKey{Batch: b.ID, Line: 2})
	snapAt := clock
	snap := filepath.Join(t.TempDir(), "snap.db")
	if _, err := d.Backup(snap); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour)
	oldInstance := d.Instance()

	if _, err := Restore(dir, snap, RestoreOptions{}); !errors.Is(err, ErrInUse) {
		t.Fatalf("restore while the ledger is open: %v, want ErrInUse", err)
	}
	d.Close()
	if _, err := Restore(dir, filepath.Join(dir, FileName), RestoreOptions{}); err == nil {
		t.Fatal("restoring the ledger onto itself was accepted")
	}
	notSnap := filepath.Join(t.TempDir(), "raw.db")
	copyTo(t, filepath.Join(dir, FileName), notSnap)
	if _, err := Restore(dir, notSnap, RestoreOptions{}); err == nil || !strings.Contains(err.Error(), "not a snapshot") {
		t.Fatalf("restore of a raw copy: %v", err)
	}

	restoredAt := clock.Add(time.Hour)
	var waited time.Time
	res, err := Restore(dir, snap, RestoreOptions{Now: func() time.Time { return restoredAt }, Settle: 1000 * time.Hour,
		Wait: func(until time.Time) error { waited = until; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if waited.IsZero() {
		t.Fatal("restore did not wait for the replaced ledger to settle")
	}
	m := res.Mark
	if !m.SnapshotAt.Equal(snapAt) || m.RowsInDoubt != 3 || m.PreviousInstance != oldInstance || m.Instance == oldInstance || m.Replaced == "" {
		t.Fatalf("mark %+v", m)
	}
	if _, err := os.Stat(m.Replaced); err != nil {
		t.Fatalf("the replaced ledger was not kept: %v", err)
	}
	if mk, _, _ := boltkv.ReadMarker(dir); mk.Instance != m.Instance {
		t.Fatalf("marker %+v after restore, want instance %s", mk, m.Instance)
	}
	d, err = Open(dir, Options{})
	if err != nil {
		t.Fatalf("open after restore: %v", err)
	}
	defer d.Close()
	if d.Instance() != m.Instance {
		t.Fatalf("instance %s after restore, want %s", d.Instance(), m.Instance)
	}
}

func TestCheckFindsBrokenInvariants(t *testing.T) {
	dir := t.TempDir()
	d, b := ledgerWith(t, dir, 12)
	rep, err := CheckFile(d.Path())
	if err == nil {
		t.Fatal("CheckFile read a ledger another DB holds")
	}
	d.Close()
	path := filepath.Join(dir, FileName)
	rep, err = CheckFile(path)
	if err != nil || !rep.OK() || rep.Rows != 12 || rep.Checks != 3 || rep.ByState[payment.Pending] != 7 {
		t.Fatalf("good ledger: %+v %v", rep, err)
	}
	k := func(line uint32) []byte { return keyBytes(payment.RowKey{Batch: b.ID, Line: line}) }
	bd, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bd.Update(func(btx *bolt.Tx) error {
		tx := boltkv.Tx(btx)
		open, rows := tx.Bucket(bucketOpen), tx.Bucket(bucketRows)
		open.Delete(k(7)) // a pending row missing from the open index
		open.Put(k(99), []byte("pending"))
		// Row 3 claims row 2's check.
		r3, _ := paymentRows.get(nil, tx, payment.RowKey{Batch: b.ID, Line: 3})
		r3.CheckID = "chk-2"
		rows.Put(k(3), encodeRow(nil, r3))
		// Row 8's state is not a state; row 9 does not decode.
		r8, _ := paymentRows.get(nil, tx, payment.RowKey{Batch: b.ID, Line: 8})
		r8.State = "paid"
		rows.Put(k(8), encodeRow(nil, r8))
		rows.Put(k(9), []byte{rowCodecV1, 0xff})
		// The batch counts one pending row too many.
		bt, _ := getBatch(tx, b.ID)
		bt.Counts[payment.Pending]++
		return putBatch(tx, bt)
	})
	bd.Close()
	if err != nil {
		t.Fatal(err)
	}
	rep, err = CheckFile(path)
	if err != nil || rep.OK() {
		t.Fatalf("broken ledger passed: %+v %v", rep, err)
	}
	all := ""
	for _, f := range rep.Faults {
		all += f.String() + "\n"
	}
	for _, want := range []string{
		fmt.Sprintf("batch %d line 7: is pending but missing from the open index", b.ID),
		fmt.Sprintf("batch %d line 99: the open index names a row that does not exist", b.ID),
		fmt.Sprintf("batch %d line 3: owns check chk-2, which the checks index gives to batch %d line 2", b.ID, b.ID),
		fmt.Sprintf("batch %d line 8: has the unknown state \"paid\"", b.ID),
		fmt.Sprintf("batch %d line 9: does not decode", b.ID),
		fmt.Sprintf("batch %d: counts", b.ID),
		"check chk-3: the checks index names",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no fault %q in:\n%s", want, all)
		}
	}
	if strings.Contains(all, "11110000") {
		t.Errorf("a fault shows an account number:\n%s", all)
	}
}
