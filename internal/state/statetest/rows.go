package statetest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// Row transitions and their refusals (ErrIllegal).
var rowCases = []testCase{
	{"Lifecycle", testLifecycle},
	{"RefusalsLeaveTheRow", testRefusalsLeaveTheRow},
	{"UnknownRows", testUnknownRows},
	{"RowsByKey", testRowsByKey},
	{"ScansCrossChunks", testScansCrossChunks},
	{"FinalStatusNeverChanges", testFinalStatusNeverChanges},
	{"ObservedPageNamesARowTwice", testObservedPageNamesARowTwice},
	{"Voided", testVoided},
	{"SendByDeadline", testSendByDeadline},
}

func testLifecycle(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "a.csv", 3)
	k := key(b, 2)

	r, err := d.Send(k)
	if err != nil || r.State != payment.InFlight || r.Attempts != 1 || !r.AttemptAt.Equal(Epoch) {
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
		if _, err := d.ObserveStatus(k, s, d.clock.Add(1)); err != nil {
			t.Fatal(err)
		}
	}
	r = row(t, d.DB, k)
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
	if got := payKeys(t, d.TrackedRows); len(got) != 0 {
		t.Fatalf("final row still tracked: %v", got)
	}

	k3 := key(b, 3)
	d.Send(k3)
	if _, err := d.Reject(k3, "amount invalid"); err != nil {
		t.Fatal(err)
	}
	if r := row(t, d.DB, k3); r.State != payment.Rejected || r.Error != "amount invalid" || r.Final() != true {
		t.Fatalf("rejected row %+v", r)
	}
	bb := batch(t, d.DB, b.ID)
	if bb.Counts[payment.Submitted] != 1 || bb.Counts[payment.Rejected] != 1 || bb.Counts[payment.Pending] != 1 || bb.OpenRows() != 1 {
		t.Fatalf("counts %+v", bb.Counts)
	}
	d.invariants()
}

// rowIn makes a row of its own in state st and returns its key.
func rowIn(t *testing.T, d *fixture, st payment.RowState) payment.RowKey {
	t.Helper()
	var b payment.Batch
	if st == payment.Held {
		b = loadMarked(t, d.DB, "held-"+string(st)+".csv", "hold")
		return key(b, 3)
	}
	b = load(t, d.DB, "in-"+string(st)+".csv", 1)
	k := key(b, 2)
	steps := map[payment.RowState][]func() error{
		payment.Pending:   nil,
		payment.InFlight:  {send(d, k)},
		payment.InDoubt:   {send(d, k), func() error { _, err := d.Doubt(k, "timeout"); return err }},
		payment.Rejected:  {send(d, k), func() error { _, err := d.Reject(k, "no"); return err }},
		payment.Submitted: {send(d, k), created(d, k, fmt.Sprintf("chk-%d-%d", k.Batch, k.Line))},
	}[st]
	for _, s := range steps {
		if err := s(); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

func send(d *fixture, k payment.RowKey) func() error {
	return func() error { _, err := d.Send(k); return err }
}

func created(d *fixture, k payment.RowKey, id string) func() error {
	return func() error {
		_, err := d.Created(k, payment.CheckResult{CheckID: id, Status: payment.StatusInProcess})
		return err
	}
}

// testRefusalsLeaveTheRow tries every transition on a row in every state:
// those payment's table refuses wrap ErrIllegal and change nothing, the
// row nor its batch's counts.
func testRefusalsLeaveTheRow(t *testing.T, be Backend) {
	d := open(t, be)
	type attempt struct {
		via payment.Transition
		do  func(k payment.RowKey) error
	}
	attempts := []attempt{
		{payment.Send, func(k payment.RowKey) error { _, err := d.Send(k); return err }},
		{payment.Doubt, func(k payment.RowKey) error { _, err := d.Doubt(k, "timeout"); return err }},
		{payment.Reject, func(k payment.RowKey) error { _, err := d.Reject(k, "no"); return err }},
		{payment.Release, func(k payment.RowKey) error { _, err := d.Release(k, "not found"); return err }},
		{payment.Create, func(k payment.RowKey) error { return created(d, k, fmt.Sprintf("chk-new-%d-%d", k.Batch, k.Line))() }},
		{payment.Approve, func(k payment.RowKey) error { _, err := d.ApproveHeld(k, "alice"); return err }},
		{payment.Observe, func(k payment.RowKey) error { return d.Voided(k, "test") }},
	}
	for _, st := range []payment.RowState{payment.Pending, payment.InFlight, payment.InDoubt, payment.Submitted, payment.Rejected, payment.Held} {
		k := rowIn(t, d, st)
		before := row(t, d.DB, k)
		counts := batch(t, d.DB, k.Batch).Counts
		for _, a := range attempts {
			if _, err := a.via.Next(st); err == nil {
				continue // legal: the other tests take it
			}
			if err := a.do(k); !errors.Is(err, payment.ErrIllegal) {
				t.Errorf("%s of a %s row: %v, want ErrIllegal", a.via, st, err)
			}
		}
		if after := row(t, d.DB, k); !reflect.DeepEqual(after, before) {
			t.Errorf("refusals changed the %s row:\nbefore %+v\nafter  %+v", st, before, after)
		}
		if got := batch(t, d.DB, k.Batch).Counts; !reflect.DeepEqual(got, counts) {
			t.Errorf("refusals changed the counts of the %s row's batch: %v, were %v", st, got, counts)
		}
	}
	d.invariants()
}

// testUnknownRows: every transition of a row that does not exist wraps
// ErrNotFound, and makes nothing.
func testUnknownRows(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "a.csv", 1)
	for _, k := range []payment.RowKey{key(b, 9), {Batch: b.ID + 7, Line: 2}} {
		for name, err := range map[string]error{
			"Send":  func() error { _, err := d.Send(k); return err }(),
			"Doubt": func() error { _, err := d.Doubt(k, "x"); return err }(),
			"Row":   func() error { _, err := d.Row(k); return err }(),
			"Batch": func() error { _, err := d.Batch(k.Batch + 1); return err }(),
		} {
			if !errors.Is(err, payment.ErrNotFound) {
				t.Errorf("%s of %s: %v, want ErrNotFound", name, k, err)
			}
		}
	}
	if got := batchRows(t, d.DB, b.ID); len(got) != 1 {
		t.Fatalf("rows %v", got)
	}
	d.invariants()
}

// testRowsByKey: rows read together are the rows Row reads, in the
// keys' order (a key named twice read twice), account numbers opened; a
// key with no row fails the read as Row fails.
func testRowsByKey(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "a.csv", 3)
	submit(t, d.DB, key(b, 3), "c3", payment.StatusPrinted)
	keys := []payment.RowKey{key(b, 3), key(b, 2), key(b, 4), key(b, 3)}
	rows, err := d.RowsByKey(keys)
	if err != nil || len(rows) != len(keys) {
		t.Fatalf("RowsByKey = %d rows, %v", len(rows), err)
	}
	for i, k := range keys {
		want, err := d.Row(k)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rows[i], want) {
			t.Errorf("RowsByKey's row %d (%s) differs from Row's", i, k)
		}
	}
	if rows[0].CheckID != "c3" || rows[1].State != payment.Pending || rows[1].Payment.BankAccount == "" {
		t.Fatalf("RowsByKey: %+v, %+v", rows[0], rows[1])
	}
	if rows, err := d.RowsByKey(nil); err != nil || len(rows) != 0 {
		t.Fatalf("RowsByKey(nil) = %v %v", rows, err)
	}
	if _, err := d.RowsByKey([]payment.RowKey{key(b, 2), key(b, 9)}); !errors.Is(err, payment.ErrNotFound) {
		t.Fatalf("RowsByKey of a key with no row: %v, want ErrNotFound", err)
	}
}

// testScansCrossChunks: a scan reads a batch's rows in chunks (1,000
// rows, each in a read transaction of its own); a batch of more than two
// chunks, followed by another, is read whole, in line order, each row
// once, and stops at its own last row.
func testScansCrossChunks(t *testing.T, be Backend) {
	d := open(t, be)
	const n = 2100
	a := load(t, d.DB, "a.csv", n)
	b := load(t, d.DB, "b.csv", 5)
	check := func(what string, got []payment.RowKey, want int, batches ...payment.Batch) {
		t.Helper()
		if len(got) != want {
			t.Fatalf("%s: %d rows, want %d", what, len(got), want)
		}
		i := 0
		for _, bt := range batches {
			for line := uint32(2); line < uint32(2+bt.Rows); line++ {
				if got[i] != key(bt, line) {
					t.Fatalf("%s: row %d is %s, want %s", what, i, got[i], key(bt, line))
				}
				i++
			}
		}
	}
	check("Rows of a", batchRows(t, d.DB, a.ID), n, a)
	check("Rows of b", batchRows(t, d.DB, b.ID), 5, b)
	check("OpenRows", payKeys(t, d.OpenRows), n+5, a, b)
}

// testObservedPageNamesARowTwice: a page of observations read together
// (one round trip) still applies each on the row as the ones before it
// in the page left it.
func testObservedPageNamesARowTwice(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "a.csv", 2)
	k := key(b, 2)
	submit(t, d.DB, k, "c1", payment.StatusInProcess)
	obs := []payment.Observation{{Key: k, Status: payment.StatusPrinted}, {Key: k, Status: payment.StatusDeposited},
		{Key: k, Status: payment.StatusPrinted}}
	changed, err := d.ObserveStatuses(obs, d.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if r := changed[k]; r == nil || r.CheckStatus != payment.StatusDeposited {
		t.Fatalf("changed %+v, want the row deposited", changed)
	}
	r := row(t, d.DB, k)
	var seen []payment.Status
	for _, s := range r.History {
		if s.Via == payment.Observe {
			seen = append(seen, s.CheckStatus)
		}
	}
	if r.CheckStatus != payment.StatusDeposited || fmt.Sprint(seen) != "[printed deposited]" {
		t.Errorf("row %s with observed steps %v, want deposited after [printed deposited]", r.CheckStatus, seen)
	}
	d.invariants()
}

func testFinalStatusNeverChanges(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "a.csv", 2)
	k := key(b, 2)
	submit(t, d.DB, k, "c1", payment.StatusInProcess)
	if changed, err := d.ObserveStatus(k, payment.StatusInProcess, d.clock.Now()); err != nil || changed {
		t.Fatalf("the same status again: changed %v, %v", changed, err)
	}
	if changed, err := d.ObserveStatus(k, payment.StatusDeposited, d.clock.Now()); err != nil || !changed {
		t.Fatalf("deposited: changed %v, %v", changed, err)
	}
	steps := len(row(t, d.DB, k).History)
	if changed, _ := d.ObserveStatus(k, payment.StatusPrinted, d.clock.Now()); changed {
		t.Fatal("a deposited check went back to printed")
	}
	if r := row(t, d.DB, k); r.CheckStatus != payment.StatusDeposited || len(r.History) != steps {
		t.Fatalf("after a late printed: %s, %d steps (want %d)", r.CheckStatus, len(r.History), steps)
	}
}

// testVoided: batchd's own void of a check is a final status, with why.
func testVoided(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "a.csv", 1)
	k := key(b, 2)
	submit(t, d.DB, k, "c1", payment.StatusInProcess)
	if err := d.Voided(k, "paid twice"); err != nil {
		t.Fatal(err)
	}
	r := row(t, d.DB, k)
	if r.CheckStatus != payment.StatusVoid || !r.Final() || r.Error != "paid twice" || !strings.Contains(r.History[len(r.History)-1].Note, "paid twice") {
		t.Fatalf("voided row %+v", r)
	}
	if got := payKeys(t, d.TrackedRows); len(got) != 0 {
		t.Fatalf("a voided check is tracked: %v", got)
	}
	d.invariants()
}

// Loading files: identity, refusals, visibility, batches and files.
var loadingCases = []testCase{
	{"AssignsIdentity", testLoadAssignsIdentity},
	{"NumbersUniqueAndIncreasing", testNumbersUniqueAndIncreasing},
	{"CrashMidLoadIsDiscarded", testCrashMidLoadIsDiscarded},
	{"OpenRowsSkipLoadingBatches", testOpenRowsSkipLoadingBatches},
	{"Reject", testReject},
	{"Abort", testAbort},
	{"FilesByContentHash", testFilesByContentHash},
	{"BatchesListing", testBatchesListing},
}

func testLoadAssignsIdentity(t *testing.T, be Backend) {
	d := open(t, be)
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
	r2, r3, r5 := row(t, d.DB, key(b, 2)), row(t, d.DB, key(b, 3)), row(t, d.DB, key(b, 5))
	if r2.Label != "payroll" || r2.Number != "77" {
		t.Fatalf("CSV identity not kept: %q %q", r2.Label, r2.Number)
	}
	if r3.Label != b.Label || !strings.HasPrefix(b.Label, "batchd-"+d.Instance()+"-") {
		t.Fatalf("batch label %q on row, batch %q", r3.Label, b.Label)
	}
	if r3.Number == "" || r3.Number == r5.Number {
		t.Fatalf("numbers not unique: %q %q", r3.Number, r5.Number)
	}
	if d.Instance() == "" {
		t.Fatal("the ledger has no instance")
	}
}

// testNumbersUniqueAndIncreasing: the numbers batchd gives rows grow in
// batch and line order, over several load transactions and batches, and
// one an aborted load used is never given again; every batch has a
// label of its own.
func testNumbersUniqueAndIncreasing(t *testing.T, be Backend) {
	d := open(t, be)
	a := load(t, d.DB, "a.csv", 7) // chunks of 3: three transactions
	l, _ := d.BeginBatch(payment.FileMeta{Name: "aborted.csv", SHA256: "aborted"})
	for i := range 4 {
		l.Add(i+2, pay("1111000001", 1))
	}
	if err := l.Abort(); err != nil {
		t.Fatal(err)
	}
	b := load(t, d.DB, "b.csv", 5)
	d.reopen()
	c := load(t, d.DB, "c.csv", 2)
	var last uint64
	labels := map[string]bool{}
	for _, bt := range []payment.Batch{a, b, c} {
		if labels[bt.Label] || !strings.Contains(bt.Label, d.Instance()) {
			t.Fatalf("batch %d label %q (seen %v)", bt.ID, bt.Label, labels)
		}
		labels[bt.Label] = true
		for _, k := range batchRows(t, d.DB, bt.ID) {
			r := row(t, d.DB, k)
			var n uint64
			if _, err := fmt.Sscan(r.Number, &n); err != nil || n <= last {
				t.Fatalf("%s: number %q after %d, want a larger one", k, r.Number, last)
			}
			last = n
		}
	}
	if !(a.ID < b.ID && b.ID < c.ID) {
		t.Fatalf("batch ids %d %d %d not increasing", a.ID, b.ID, c.ID)
	}
}

// testCrashMidLoadIsDiscarded: a batch a stopped process left loading
// is discarded by the next leader's TakeOver (bbolt's Open discards it
// already: package state tests that), and its content is ingested again.
func testCrashMidLoadIsDiscarded(t *testing.T, be Backend) {
	d := open(t, be, func(o *state.Options) { o.LoadChunk = 2 })
	ready := load(t, d.DB, "ready.csv", 1)
	l, _ := d.BeginBatch(payment.FileMeta{Name: "a.csv", SHA256: "x"})
	for i := range 5 {
		l.Add(i+2, pay("1111000016", 1)) // flushes two chunks
	}
	d.reopen() // the crash: never committed
	if rep, err := d.TakeOver(); err != nil || rep.InDoubt != 0 || rep.Rewind != nil {
		t.Fatalf("TakeOver = %+v, %v", rep, err)
	}
	if bs, _ := d.Batches(); len(bs) != 1 || bs[0].ID != ready.ID {
		t.Fatalf("half-loaded batch survived: %+v", bs)
	}
	if got := payKeys(t, d.OpenRows); len(got) != 1 {
		t.Fatalf("rows of a discarded batch still open: %v", got)
	}
	if n := len(batchRows(t, d.DB, l.Batch().ID)); n != 0 {
		t.Fatalf("%d rows of a discarded batch left", n)
	}
	if _, err := d.BeginBatch(payment.FileMeta{Name: "a.csv", SHA256: "x"}); err != nil {
		t.Fatalf("content of a discarded batch must be ingestible again: %v", err)
	}
	d.invariants()
}

func testOpenRowsSkipLoadingBatches(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "ready.csv", 4)
	l, _ := d.BeginBatch(payment.FileMeta{Name: "loading.csv", SHA256: "y"})
	for i := range 4 {
		l.Add(i+2, pay("1111000016", 1))
	}
	got := payKeys(t, d.OpenRows)
	if len(got) != 4 || got[0] != key(b, 2) || got[3] != key(b, 5) {
		t.Fatalf("open rows %v", got)
	}
}

func testReject(t *testing.T, be Backend) {
	d := open(t, be)
	l, _ := d.BeginBatch(payment.FileMeta{Name: "bad.csv", SHA256: "z"})
	for i := range 7 {
		l.Add(i+2, pay("1111000016", 1))
	}
	b, err := l.Reject(8, 1, "line 9: amount must be greater than 0")
	if err != nil || b.Status != payment.BatchRejected {
		t.Fatalf("Reject: %+v %v", b, err)
	}
	if got := payKeys(t, d.OpenRows); len(got) != 0 {
		t.Fatalf("rows of a rejected file are open: %v", got)
	}
	f, err := d.File("z")
	if err != nil || f.Accepted {
		t.Fatalf("file record %+v %v", f, err)
	}
	if _, err := d.BeginBatch(payment.FileMeta{Name: "bad.csv", SHA256: "z"}); err != nil {
		t.Fatalf("a refused file dropped again must be read again: %v", err)
	}
	d.invariants()
}

func testAbort(t *testing.T, be Backend) {
	d := open(t, be)
	l, _ := d.BeginBatch(payment.FileMeta{Name: "a.csv", SHA256: "q"})
	for i := range 7 {
		l.Add(i+2, pay("1111000016", 1))
	}
	if err := l.Abort(); err != nil {
		t.Fatal(err)
	}
	bs, _ := d.Batches()
	if n := len(payKeys(t, d.OpenRows)); len(bs) != 0 || n != 0 {
		t.Fatalf("aborted batch left %d batches, %d rows", len(bs), n)
	}
	if _, err := d.File("q"); !errors.Is(err, payment.ErrNotFound) {
		t.Fatalf("file of an aborted load: %v, want ErrNotFound", err)
	}
	d.invariants()
}

// testFilesByContentHash: accepted content is refused again
// (ErrDuplicate), File names the batch, and FileMoved is kept.
func testFilesByContentHash(t *testing.T, be Backend) {
	d := open(t, be)
	if _, err := d.File("sha-a.csv"); !errors.Is(err, payment.ErrNotFound) {
		t.Fatalf("File of unknown content: %v, want ErrNotFound", err)
	}
	b := load(t, d.DB, "a.csv", 2)
	if _, err := d.BeginBatch(payment.FileMeta{Name: "again.csv", SHA256: "sha-a.csv"}); !errors.Is(err, payment.ErrDuplicate) {
		t.Fatalf("same content again: %v, want ErrDuplicate", err)
	}
	if err := d.FileMoved("sha-a.csv", "archive/2026-03-02/a.csv"); err != nil {
		t.Fatal(err)
	}
	d.reopen()
	f, err := d.File("sha-a.csv")
	if err != nil || !f.Accepted || f.BatchID != b.ID || f.Name != "a.csv" || f.Moved != "archive/2026-03-02/a.csv" {
		t.Fatalf("file %+v %v", f, err)
	}
	if _, err := d.BeginBatch(payment.FileMeta{Name: "a.csv", SHA256: "sha-a.csv"}); !errors.Is(err, payment.ErrDuplicate) {
		t.Fatalf("same content after a reopen: %v, want ErrDuplicate", err)
	}
}

// testBatchesListing: Batches lists every batch oldest first, with its
// kind, status and counts, and Batch finds each.
func testBatchesListing(t *testing.T, be Backend) {
	d := open(t, be)
	if bs, err := d.Batches(); err != nil || len(bs) != 0 {
		t.Fatalf("fresh ledger: %v %v", bs, err)
	}
	a := load(t, d.DB, "a.csv", 2)
	l, _ := d.BeginBatch(payment.FileMeta{Name: "r.csv", SHA256: "r"})
	r, _ := l.Reject(1, 1, "no header")
	s := loadSources(t, d.DB, "s.csv", payment.KindSources, srcReq(1))
	submit(t, d.DB, key(a, 2), "c1", payment.StatusInProcess)
	loading, _ := d.BeginBatch(payment.FileMeta{Name: "loading.csv", SHA256: "l"})
	loading.Add(2, pay("1111000001", 1))
	bs, err := d.Batches()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range bs {
		got = append(got, fmt.Sprintf("%d %s %s %s %v", b.ID, b.File, b.Kind, b.Status, b.Counts))
		if one := batch(t, d.DB, b.ID); one.File != b.File || one.Status != b.Status {
			t.Errorf("Batch(%d) = %+v, listed %+v", b.ID, one, b)
		}
	}
	if len(bs) < 3 || bs[0].ID != a.ID || bs[1].ID != r.ID || bs[2].ID != s.ID ||
		bs[0].Counts[payment.Submitted] != 1 || bs[0].Counts[payment.Pending] != 1 ||
		bs[1].Status != payment.BatchRejected || bs[2].Kind != payment.KindSources {
		t.Fatalf("batches:\n%s", strings.Join(got, "\n"))
	}
}

// testSendByDeadline: with a send window, Send records the deadline by
// which the create must leave (or be dropped), and Doubt and Created keep
// it; a row sent again gets a new one. Without a window there is none.
func testSendByDeadline(t *testing.T, be Backend) {
	const window = 20 * time.Second
	d := open(t, be, func(o *state.Options) { o.SendWindow = window })
	b := load(t, d.DB, "a.csv", 1)
	k := key(b, 2)
	r, err := d.Send(k)
	if err != nil || !r.SendBy.Equal(Epoch.Add(window)) {
		t.Fatalf("Send: send by %v (%v), want %v", r.SendBy, err, Epoch.Add(window))
	}
	if r = row(t, d.DB, k); !r.SendBy.Equal(Epoch.Add(window)) {
		t.Fatalf("stored send by %v", r.SendBy)
	}
	d.Release(k, "429")
	at := d.clock.Add(time.Minute)
	if r, err = d.Send(k); err != nil || !r.SendBy.Equal(at.Add(window)) {
		t.Fatalf("second Send: send by %v (%v), want %v", r.SendBy, err, at.Add(window))
	}

	plain := open(t, be)
	pb := load(t, plain.DB, "p.csv", 1)
	if r, err := plain.Send(key(pb, 2)); err != nil || !r.SendBy.IsZero() {
		t.Fatalf("Send without a window: send by %v, %v", r.SendBy, err)
	}
}
