package state

import (
	"errors"
	"fmt"
	"github.com/batchd/batchd/internal/state/kv"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

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

func TestLoadAssignsIdentity(t *testing.T) {
	d := open(t, t.TempDir())
	l, err := d.BeginBatch(payment.FileMeta{Name: "a.csv", SHA256: "x"})
	if err != nil {
		t.Fatal(err)
	}
	given := pay("1111000016", 5)
	given.Label, given.Number = "payroll", "77"
	l.Add(2, given)
	l.Add(3, pay("1111000016", 6))
	l.Add(5, pay("1111000016", 7))
	b, err := l.Commit(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b.Counts[payment.Pending] != 3 || b.Status != payment.BatchReady {
		t.Fatalf("batch %+v", b)
	}
	r2, _ := d.Row(payment.RowKey{Batch: b.ID, Line: 2})
	r3, _ := d.Row(payment.RowKey{Batch: b.ID, Line: 3})
	r5, _ := d.Row(payment.RowKey{Batch: b.ID, Line: 5})
	if r2.Label != "payroll" || r2.Number != "77" {
		t.Fatalf("CSV identity not kept: %q %q", r2.Label, r2.Number)
	}
	if r3.Label != b.Label || !strings.HasPrefix(b.Label, "batchd-"+d.Instance()+"-") {
		t.Fatalf("batch label %q on row, batch %q", r3.Label, b.Label)
	}
	if r3.Number == "" || r3.Number == r5.Number {
		t.Fatalf("numbers not unique: %q %q", r3.Number, r5.Number)
	}
	if _, err := d.BeginBatch(payment.FileMeta{Name: "again.csv", SHA256: "x"}); !errors.Is(err, payment.ErrDuplicate) {
		t.Fatalf("same content again: %v", err)
	}
}

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

func TestOpenRowsSkipLoadingBatches(t *testing.T) {
	d := open(t, t.TempDir())
	b := load(t, d, "ready.csv", 4)
	l, _ := d.BeginBatch(payment.FileMeta{Name: "loading.csv", SHA256: "y"})
	for i := 0; i < 4; i++ {
		l.Add(i+2, pay("1111000016", 1))
	}
	var got []payment.RowKey
	d.OpenRows(func(r *payment.Row) (bool, error) { got = append(got, r.Key); return true, nil })
	if len(got) != 4 || got[0] != (payment.RowKey{Batch: b.ID, Line: 2}) || got[3] != (payment.RowKey{Batch: b.ID, Line: 5}) {
		t.Fatalf("open rows %v", got)
	}
}

func TestLifecycle(t *testing.T) {
	d := open(t, t.TempDir())
	b := load(t, d, "a.csv", 3)
	k := payment.RowKey{Batch: b.ID, Line: 2}

	r, err := d.Send(k)
	if err != nil || r.State != payment.InFlight || r.Attempts != 1 || r.AttemptAt.IsZero() {
		t.Fatalf("Send: %+v %v", r, err)
	}
	if _, err := d.Send(k); !errors.Is(err, payment.ErrIllegal) {
		t.Fatalf("second Send: %v, want ErrIllegal", err)
	}
	if _, err := d.Doubt(k, "timeout"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Reject(k, "no"); !errors.Is(err, payment.ErrIllegal) {
		t.Fatalf("Reject from in_doubt: %v", err)
	}
	r, err = d.Created(k, payment.CheckResult{CheckID: "c1", Status: "in_process", Risk: "Pass", Note: "found"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Payment.BankAccount != "" || r.Payment.AccountLast4 != "0001" {
		t.Fatalf("account not scrubbed after create: %+v", r.Payment)
	}
	if got, _ := d.RowByCheck("c1"); got == nil || got.Key != k {
		t.Fatalf("check index: %+v", got)
	}
	for _, s := range []payment.Status{"printed", "printed", "deposited"} {
		if _, err := d.ObserveStatus(k, s, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	r, _ = d.Row(k)
	var path []string
	for _, s := range r.History {
		path = append(path, string(s.State)+"/"+string(s.CheckStatus))
	}
	want := "pending/ in_flight/ in_doubt/ submitted/in_process submitted/printed submitted/deposited"
	if strings.Join(path, " ") != want {
		t.Fatalf("history %q\nwant    %q", strings.Join(path, " "), want)
	}
	if !r.Final() || r.DepositedSeenAt.IsZero() {
		t.Fatalf("deposited row not final: %+v", r)
	}
	tracked := 0
	d.TrackedRows(func(*payment.Row) (bool, error) { tracked++; return true, nil })
	if tracked != 0 {
		t.Fatalf("final row still tracked")
	}

	k3 := payment.RowKey{Batch: b.ID, Line: 3}
	d.Send(k3)
	if _, err := d.Created(k3, payment.CheckResult{CheckID: "c1", Status: "in_process"}); err == nil {
		t.Fatal("a check id was bound to two rows")
	}
	if _, err := d.Reject(k3, "amount invalid"); err != nil {
		t.Fatal(err)
	}
	bb, _ := d.Batch(b.ID)
	if bb.Counts[payment.Submitted] != 1 || bb.Counts[payment.Rejected] != 1 || bb.Counts[payment.Pending] != 1 || bb.OpenRows() != 1 {
		t.Fatalf("counts %+v", bb.Counts)
	}
}

func TestRecoverInFlight(t *testing.T) {
	dir := t.TempDir()
	d, _ := Open(dir, Options{})
	b := load(t, d, "a.csv", 2)
	d.Send(payment.RowKey{Batch: b.ID, Line: 2})
	d.Close()
	d = open(t, dir)
	n, err := d.RecoverInFlight()
	if err != nil || n != 1 {
		t.Fatalf("RecoverInFlight = %d, %v", n, err)
	}
	r, _ := d.Row(payment.RowKey{Batch: b.ID, Line: 2})
	if r.State != payment.InDoubt || r.Payment.BankAccount == "" {
		t.Fatalf("recovered row %+v: must be in doubt and keep its account for a resend", r)
	}
}

func TestReject(t *testing.T) {
	d := open(t, t.TempDir())
	l, _ := d.BeginBatch(payment.FileMeta{Name: "bad.csv", SHA256: "z"})
	for i := 0; i < 7; i++ {
		l.Add(i+2, pay("1111000016", 1))
	}
	b, err := l.Reject(8, 1, "line 9: amount must be greater than 0")
	if err != nil || b.Status != payment.BatchRejected {
		t.Fatalf("Reject: %+v %v", b, err)
	}
	n := 0
	d.OpenRows(func(*payment.Row) (bool, error) { n++; return true, nil })
	if n != 0 {
		t.Fatalf("rows of a rejected file are open")
	}
	f, err := d.File("z")
	if err != nil || f.Accepted {
		t.Fatalf("file record %+v %v", f, err)
	}
	if _, err := d.BeginBatch(payment.FileMeta{Name: "bad.csv", SHA256: "z"}); err != nil {
		t.Fatalf("a refused file dropped again must be read again: %v", err)
	}
}

func TestAbort(t *testing.T) {
	d := open(t, t.TempDir())
	l, _ := d.BeginBatch(payment.FileMeta{Name: "a.csv", SHA256: "q"})
	for i := 0; i < 7; i++ {
		l.Add(i+2, pay("1111000016", 1))
	}
	if err := l.Abort(); err != nil {
		t.Fatal(err)
	}
	bs, _ := d.Batches()
	n := 0
	d.OpenRows(func(*payment.Row) (bool, error) { n++; return true, nil })
	if len(bs) != 0 || n != 0 {
		t.Fatalf("aborted batch left %d batches, %d rows", len(bs), n)
	}
}

func TestConcurrentSendsGroupCommit(t *testing.T) {
	d := open(t, t.TempDir())
	b := load(t, d, "a.csv", 200)
	before := d.Commits()
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func(line int) {
			defer wg.Done()
			if _, err := d.Send(payment.RowKey{Batch: b.ID, Line: uint32(line)}); err != nil {
				t.Error(err)
			}
		}(i + 2)
	}
	wg.Wait()
	bb, _ := d.Batch(b.ID)
	if bb.Counts[payment.InFlight] != 200 {
		t.Fatalf("counts %+v", bb.Counts)
	}
	if commits := d.Commits() - before; commits >= 100 {
		t.Fatalf("%d commits for 200 concurrent sends: group commit not working", commits)
	}
}

func TestLastSuccess(t *testing.T) {
	dir := t.TempDir()
	d, _ := Open(dir, Options{})
	if _, ok, err := d.LastSuccess("ingest"); ok || err != nil {
		t.Fatalf("fresh ledger has a last success: %v %v", ok, err)
	}
	at := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	if err := d.RecordSuccess("ingest", at); err != nil {
		t.Fatal(err)
	}
	d.Close()
	d = open(t, dir)
	got, ok, err := d.LastSuccess("ingest")
	if !ok || err != nil || !got.Equal(at) {
		t.Fatalf("LastSuccess = %v %v %v", got, ok, err)
	}
}

func TestObserveStatusesIsOneCommit(t *testing.T) {
	d := open(t, t.TempDir())
	b := load(t, d, "a.csv", 50)
	var obs []payment.Observation
	for line := 2; line < 52; line++ {
		k := payment.RowKey{Batch: b.ID, Line: uint32(line)}
		d.Send(k)
		d.Created(k, payment.CheckResult{CheckID: fmt.Sprintf("c%d", line), Status: "in_process"})
		obs = append(obs, payment.Observation{Key: k, Status: "printed"})
	}
	obs = append(obs, payment.Observation{Key: payment.RowKey{Batch: b.ID, Line: 2}, Status: "printed"}) // a repeat changes nothing
	before := d.Commits()
	rows, err := d.ObserveStatuses(obs, time.Now())
	if err != nil || len(rows) != 50 {
		t.Fatalf("ObserveStatuses: %d rows, %v", len(rows), err)
	}
	if n := d.Commits() - before; n != 1 {
		t.Fatalf("%d commits for one page of statuses, want 1", n)
	}
	// A final status never changes.
	d.ObserveStatus(payment.RowKey{Batch: b.ID, Line: 3}, "deposited", time.Now())
	if changed, _ := d.ObserveStatus(payment.RowKey{Batch: b.ID, Line: 3}, "printed", time.Now()); changed {
		t.Fatal("a deposited check went back to printed")
	}
}
