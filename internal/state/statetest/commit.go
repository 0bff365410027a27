package statetest

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// Group commit: transitions from many goroutines all land, sharing commits.
var groupCommitCases = []testCase{
	{"ConcurrentSendsAndCreates", testConcurrentSendsAndCreates},
	{"ObserveStatusesIsOneCommit", testObserveStatusesIsOneCommit},
	{"ConcurrentPagesOfStatuses", testConcurrentPagesOfStatuses},
}

// parallel runs fn for every key from workers goroutines, as submit's
// workers do, and fails the test with the first error.
func parallel(t *testing.T, keys []payment.RowKey, workers int, fn func(payment.RowKey) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(keys); i += workers {
				if err := fn(keys[i]); err != nil {
					errs <- fmt.Errorf("%s: %w", keys[i], err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// testConcurrentSendsAndCreates: 200 rows sent and created from 200
// goroutines at once all land, in far fewer commits than rows, and each
// check is owned by its row.
func testConcurrentSendsAndCreates(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "a.csv", 200)
	keys := batchRows(t, d.DB, b.ID)
	before := d.Commits()
	parallel(t, keys, len(keys), func(k payment.RowKey) error { _, err := d.Send(k); return err })
	if bb := batch(t, d.DB, b.ID); bb.Counts[payment.InFlight] != 200 {
		t.Fatalf("counts after sends %+v", bb.Counts)
	}
	if commits := d.Commits() - before; commits >= 100 {
		t.Fatalf("%d commits for 200 concurrent sends: group commit not working", commits)
	}
	ids := func(k payment.RowKey) string { return fmt.Sprintf("chk-%d", k.Line) }
	parallel(t, keys, len(keys), func(k payment.RowKey) error {
		_, err := d.Created(k, payment.CheckResult{CheckID: ids(k), Status: payment.StatusInProcess})
		return err
	})
	var all []string
	for _, k := range keys {
		all = append(all, ids(k))
	}
	owners, err := d.CheckOwners(all)
	if err != nil || len(owners) != len(keys) {
		t.Fatalf("owners of %d checks: %d, %v", len(keys), len(owners), err)
	}
	for _, k := range keys {
		if owners[ids(k)] != k {
			t.Fatalf("check %s owned by %v, want %s", ids(k), owners[ids(k)], k)
		}
	}
	if bb := batch(t, d.DB, b.ID); bb.Counts[payment.Submitted] != 200 || len(bb.Counts) != 1 {
		t.Fatalf("counts after creates %+v", bb.Counts)
	}
	d.invariants()
}

func testObserveStatusesIsOneCommit(t *testing.T, be Backend) {
	d := open(t, be)
	keys := inProcess(t, d, 50)
	var obs []payment.Observation
	for _, k := range keys {
		obs = append(obs, payment.Observation{Key: k, Status: payment.StatusPrinted})
	}
	obs = append(obs, payment.Observation{Key: keys[0], Status: payment.StatusPrinted}) // a repeat changes nothing
	before := d.Commits()
	rows, err := d.ObserveStatuses(obs, d.clock.Add(time.Hour))
	if err != nil || len(rows) != 50 {
		t.Fatalf("ObserveStatuses: %d rows, %v", len(rows), err)
	}
	if n := d.Commits() - before; n != 1 {
		t.Fatalf("%d commits for one page of statuses, want 1", n)
	}
	if r := rows[keys[1]]; r == nil || r.CheckStatus != payment.StatusPrinted || !r.StatusSeenAt.Equal(Epoch.Add(time.Hour)) {
		t.Fatalf("changed row %+v", r)
	}
	d.invariants()
}

// inProcess loads n rows and submits them from 16 goroutines, each row's
// check in process, and returns their keys.
func inProcess(t *testing.T, d *fixture, n int) []payment.RowKey {
	t.Helper()
	b := load(t, d.DB, "a.csv", n)
	keys := batchRows(t, d.DB, b.ID)
	parallel(t, keys, 16, func(k payment.RowKey) error {
		if _, err := d.Send(k); err != nil {
			return err
		}
		_, err := d.Created(k, payment.CheckResult{CheckID: fmt.Sprintf("c%d", k.Line), Status: payment.StatusInProcess})
		return err
	})
	return keys
}

// testConcurrentPagesOfStatuses: pages of observed statuses from
// concurrent callers, as reconcile's page processors make them, may share
// commits and run more than once (kv.Store.Batch): each caller gets back
// exactly its own rows, each row takes its status once, and a page naming
// a row that does not exist fails alone, recording nothing of itself.
func testConcurrentPagesOfStatuses(t *testing.T, be Backend) {
	d := open(t, be)
	keys := inProcess(t, d, 40)
	at := d.clock.Add(time.Hour)
	pages := [][]payment.Observation{{
		{Key: keys[0], Status: payment.StatusDeposited},
		{Key: payment.RowKey{Batch: keys[0].Batch, Line: 999}, Status: payment.StatusPrinted},
	}}
	for i := 0; i < len(keys); i += 10 {
		var page []payment.Observation
		for _, k := range keys[i : i+10] {
			page = append(page, payment.Observation{Key: k, Status: payment.StatusPrinted})
		}
		pages = append(pages, page)
	}
	got := make([]map[payment.RowKey]*payment.Row, len(pages))
	errs := make([]error, len(pages))
	var wg sync.WaitGroup
	for i, page := range pages {
		wg.Go(func() { got[i], errs[i] = d.ObserveStatuses(page, at) })
	}
	wg.Wait()
	if !errors.Is(errs[0], payment.ErrNotFound) {
		t.Fatalf("a page naming no row: %v, want ErrNotFound", errs[0])
	}
	for i, page := range pages[1:] {
		if errs[i+1] != nil || len(got[i+1]) != len(page) {
			t.Fatalf("page %d: %d rows, %v", i+1, len(got[i+1]), errs[i+1])
		}
		for _, o := range page {
			if r := got[i+1][o.Key]; r == nil || r.CheckStatus != payment.StatusPrinted {
				t.Fatalf("page %d: row %s %+v", i+1, o.Key, r)
			}
		}
	}
	for _, k := range keys {
		r := row(t, d.DB, k)
		steps := 0
		for _, s := range r.History {
			if s.Via == payment.Observe {
				steps++
			}
		}
		if r.CheckStatus != payment.StatusPrinted || steps != 1 {
			t.Fatalf("row %s: %s after %d observed steps, want printed after one", k, r.CheckStatus, steps)
		}
	}
	d.invariants()
}

// Recovery of rows in flight after a crash.
var recoveryCases = []testCase{
	{"RecoverInFlight", testRecoverInFlight},
	{"TakeOver", testTakeOver},
}

func testRecoverInFlight(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "a.csv", 4)
	d.Send(key(b, 2))
	d.Send(key(b, 3))
	d.Doubt(key(b, 3), "timeout")
	submit(t, d.DB, key(b, 4), "c4", payment.StatusInProcess)
	d.reopen()
	n, err := d.RecoverInFlight()
	if err != nil || n != 1 {
		t.Fatalf("RecoverInFlight = %d, %v", n, err)
	}
	r := row(t, d.DB, key(b, 2))
	if r.State != payment.InDoubt || r.Payment.BankAccount == "" || r.History[len(r.History)-1].Via != payment.Doubt {
		t.Fatalf("recovered row %+v: must be in doubt and keep its account for a resend", r)
	}
	if n, err := d.RecoverInFlight(); err != nil || n != 0 {
		t.Fatalf("a second recovery found %d, %v", n, err)
	}
	bb := batch(t, d.DB, b.ID)
	if bb.Counts[payment.InDoubt] != 2 || bb.Counts[payment.Submitted] != 1 || bb.Counts[payment.Pending] != 1 {
		t.Fatalf("counts %v", bb.Counts)
	}
	d.invariants()
}

// testTakeOver: a new leader discards the batches the old one left
// loading and puts its rows in flight, payment rows, in doubt.
func testTakeOver(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "a.csv", 3)
	d.Send(key(b, 2))
	d.Send(key(b, 3))
	submit(t, d.DB, key(b, 4), "c4", payment.StatusInProcess)
	l, _ := d.BeginBatch(payment.FileMeta{Name: "loading.csv", SHA256: "loading"})
	for i := range 4 {
		l.Add(i+2, pay("1111000001", 1))
	}
	d.reopen()
	rep, err := d.TakeOver()
	if err != nil || rep.InDoubt != 2 || rep.Rewind != nil {
		t.Fatalf("TakeOver = %+v, %v; want 2 rows put in doubt and no rewind", rep, err)
	}
	for _, k := range []payment.RowKey{key(b, 2), key(b, 3)} {
		if r := row(t, d.DB, k); r.State != payment.InDoubt {
			t.Fatalf("%s after a take-over: %s", k, r.State)
		}
	}
	if bs, _ := d.Batches(); len(bs) != 1 {
		t.Fatalf("batches after a take-over %+v", bs)
	}
	if rep, err := d.TakeOver(); err != nil || rep.InDoubt != 0 || rep.Rewind != nil {
		t.Fatalf("a second TakeOver = %+v, %v", rep, err)
	}
	d.invariants()
}

// The resolver's binding of a row in doubt, and check ownership.
var resolverCases = []testCase{
	{"CreatedOnARowInDoubt", testCreatedOnARowInDoubt},
	{"CheckOwnedByAnotherRow", testCheckOwnedByAnotherRow},
	{"ReleaseAndSendAgain", testReleaseAndSendAgain},
	{"CheckOwners", testCheckOwners},
}

func testCreatedOnARowInDoubt(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "a.csv", 1)
	k := key(b, 2)
	d.Send(k)
	d.Doubt(k, "timeout")
	created := Epoch.Add(-time.Minute)
	r, err := d.Created(k, payment.CheckResult{CheckID: "found-1", Status: payment.StatusInProcess, Created: created, Note: "found by label"})
	if err != nil || r.State != payment.Submitted || r.CheckID != "found-1" || !r.CheckCreated.Equal(created) || r.Error != "" {
		t.Fatalf("Created on a row in doubt: %+v %v", r, err)
	}
	if last := r.History[len(r.History)-1]; last.Via != payment.Create || last.Note != "found by label" {
		t.Fatalf("last step %+v", last)
	}
	if owner, ok, err := d.CheckOwner("found-1"); err != nil || !ok || owner != k {
		t.Fatalf("CheckOwner = %v %v %v", owner, ok, err)
	}
	if got, err := d.RowByCheck("found-1"); err != nil || got.Key != k {
		t.Fatalf("RowByCheck = %+v %v", got, err)
	}
	if got := payKeys(t, d.TrackedRows); !reflect.DeepEqual(got, []payment.RowKey{k}) {
		t.Fatalf("tracked %v", got)
	}
	if _, err := d.Created(k, payment.CheckResult{}); err == nil {
		t.Fatal("Created without a check id was accepted")
	}
	d.invariants()
}

// testCheckOwnedByAnotherRow: a lookup never binds a check another row
// owns: ErrCheckOwned, and neither row changes.
func testCheckOwnedByAnotherRow(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "a.csv", 3)
	owner, other := key(b, 2), key(b, 3)
	submit(t, d.DB, owner, "c1", payment.StatusInProcess)
	d.Send(other)
	d.Doubt(other, "timeout")
	ownerBefore, otherBefore := row(t, d.DB, owner), row(t, d.DB, other)
	if _, err := d.Created(other, payment.CheckResult{CheckID: "c1", Status: payment.StatusInProcess}); !errors.Is(err, payment.ErrCheckOwned) {
		t.Fatalf("a check another row owns: %v, want ErrCheckOwned", err)
	}
	if got := row(t, d.DB, owner); !reflect.DeepEqual(got, ownerBefore) {
		t.Fatalf("the owner changed: %+v", got)
	}
	if got := row(t, d.DB, other); !reflect.DeepEqual(got, otherBefore) {
		t.Fatalf("the refused row changed: %+v", got)
	}
	if k, ok, _ := d.CheckOwner("c1"); !ok || k != owner {
		t.Fatalf("CheckOwner(c1) = %v %v", k, ok)
	}
	// The same from flight, and for a check a row of another batch owns.
	b2 := load(t, d.DB, "b.csv", 1)
	d.Send(key(b2, 2))
	if _, err := d.Created(key(b2, 2), payment.CheckResult{CheckID: "c1"}); !errors.Is(err, payment.ErrCheckOwned) {
		t.Fatalf("from another batch: %v, want ErrCheckOwned", err)
	}
	if bb := batch(t, d.DB, b.ID); bb.Counts[payment.Submitted] != 1 || bb.Counts[payment.InDoubt] != 1 {
		t.Fatalf("counts %v", bb.Counts)
	}
	d.invariants()
}

// testReleaseAndSendAgain: a lookup that proves no check exists returns
// the row to pending; it is sent again as a new attempt.
func testReleaseAndSendAgain(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "a.csv", 2)
	k := key(b, 2)
	d.Send(k)
	d.Doubt(k, "timeout")
	r, err := d.Release(k, "a complete walk found no check")
	if err != nil || r.State != payment.Pending || r.Payment.BankAccount == "" {
		t.Fatalf("Release: %+v %v", r, err)
	}
	if got := payKeys(t, d.OpenRows); len(got) != 2 {
		t.Fatalf("open rows %v", got)
	}
	d.clock.Add(time.Minute)
	if r, err = d.Send(k); err != nil || r.Attempts != 2 || !r.AttemptAt.Equal(Epoch.Add(time.Minute)) {
		t.Fatalf("second Send: %+v %v", r, err)
	}
	// Refused before it was processed (a 429): straight back to pending.
	if r, err = d.Release(k, "429"); err != nil || r.State != payment.Pending {
		t.Fatalf("Release from flight: %+v %v", r, err)
	}
	d.invariants()
}

func testCheckOwners(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "a.csv", 3)
	submit(t, d.DB, key(b, 2), "c2", payment.StatusInProcess)
	submit(t, d.DB, key(b, 3), "c3", payment.StatusPrinted)
	owners, err := d.CheckOwners([]string{"c2", "c3", "nobody's", "c2"})
	if err != nil || !reflect.DeepEqual(owners, map[string]payment.RowKey{"c2": key(b, 2), "c3": key(b, 3)}) {
		t.Fatalf("CheckOwners = %v %v", owners, err)
	}
	if owners, err := d.CheckOwners(nil); err != nil || len(owners) != 0 {
		t.Fatalf("CheckOwners(nil) = %v %v", owners, err)
	}
	rows, err := d.OwnerRows([]string{"c2", "c3", "nobody's", "c2"})
	if err != nil || len(rows) != 2 || rows["c2"].Key != key(b, 2) || rows["c2"].CheckID != "c2" ||
		rows["c3"].Key != key(b, 3) || rows["c3"].CheckStatus != payment.StatusPrinted {
		t.Fatalf("OwnerRows = %v %v", rows, err)
	}
	if _, ok, err := d.CheckOwner("nobody's"); ok || err != nil {
		t.Fatalf("CheckOwner of an unknown check: %v %v", ok, err)
	}
	if _, err := d.RowByCheck("nobody's"); !errors.Is(err, payment.ErrNotFound) {
		t.Fatalf("RowByCheck of an unknown check: %v, want ErrNotFound", err)
	}
}

// Jobs' last success times.
var jobCases = []testCase{
	{"LastSuccess", testLastSuccess},
}

func testLastSuccess(t *testing.T, be Backend) {
	d := open(t, be)
	if _, ok, err := d.LastSuccess("ingest"); ok || err != nil {
		t.Fatalf("fresh ledger has a last success: %v %v", ok, err)
	}
	at := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	if err := d.RecordSuccess("ingest", at); err != nil {
		t.Fatal(err)
	}
	if err := d.RecordSuccess("reconcile", at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := d.RecordSuccess("ingest", at.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	d.reopen()
	for job, want := range map[string]time.Time{"ingest": at.Add(2 * time.Hour), "reconcile": at.Add(time.Hour)} {
		got, ok, err := d.LastSuccess(job)
		if !ok || err != nil || !got.Equal(want) {
			t.Fatalf("LastSuccess(%s) = %v %v %v, want %v", job, got, ok, err, want)
		}
	}
	if err := d.Ping(); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}
