package statetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// Retention: what Prune and PruneSources remove, keep, and archive.
var retentionCases = []testCase{
	{"Prune", testPrune},
	{"PruneArchiverFails", testPruneArchiverFails},
	{"PruneKeepsABatchThatChanges", testPruneKeepsABatchThatChanges},
	{"PruneStopsOnCancel", testPruneStopsOnCancel},
}

// pruneEpoch is when the prune tests' clocks start.
var pruneEpoch = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// openPrune is open with the clock at pruneEpoch.
func openPrune(t *testing.T, be Backend) *fixture {
	t.Helper()
	d := open(t, be)
	d.clock.Set(pruneEpoch)
	return d
}

// settle drives every row of a batch to an end: the first reject rows
// are refused by the API, the others submitted and then observed with
// status (a final one unless told otherwise). It stamps the results
// report as delivered when report is set. It returns the check ids.
func settle(t *testing.T, d *fixture, b payment.Batch, reject int, status payment.Status, report bool) []string {
	t.Helper()
	keys := batchRows(t, d.DB, b.ID)
	ids := make([]string, len(keys))
	index := map[payment.RowKey]int{}
	for i, k := range keys {
		index[k] = i
	}
	// Rows go through in parallel, as submit's workers send them, so that
	// they share commits.
	parallel(t, keys, 16, func(k payment.RowKey) error {
		i := index[k]
		if _, err := d.Send(k); err != nil {
			return err
		}
		if i < reject {
			_, err := d.Reject(k, "invalid routing")
			return err
		}
		ids[i] = fmt.Sprintf("chk-%d-%d", k.Batch, k.Line)
		_, err := d.Created(k, payment.CheckResult{CheckID: ids[i], Status: payment.StatusInProcess, Created: d.clock.Now()})
		return err
	})
	ids = ids[reject:]
	var obs []payment.Observation
	for _, k := range keys[reject:] {
		obs = append(obs, payment.Observation{Key: k, Status: status})
	}
	if _, err := d.ObserveStatuses(obs, d.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if report {
		if err := d.ResultsReported(b.ID); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// archiveLog is an Archiver that keeps what it was given.
type archiveLog struct {
	batches []uint64
	rows    map[uint64][]*payment.Row
}

func (a *archiveLog) archive(b *payment.Batch, rows func(func(*payment.Row) error) error) error {
	if a.rows == nil {
		a.rows = map[uint64][]*payment.Row{}
	}
	var got []*payment.Row
	if err := rows(func(r *payment.Row) error { got = append(got, r); return nil }); err != nil {
		return err
	}
	a.batches = append(a.batches, b.ID)
	a.rows[b.ID] = got
	return nil
}

func prunedIDs(s state.PruneSummary) []uint64 {
	var ids []uint64
	for _, p := range s.Pruned {
		ids = append(ids, p.Batch.ID)
	}
	return ids
}

// ledgerView is everything the API shows of a ledger's payment batches.
type ledgerView struct {
	Batches []payment.Batch
	Rows    map[uint64][]*payment.Row
	Owners  map[string]payment.RowKey
}

func look(t *testing.T, d *state.DB) ledgerView {
	t.Helper()
	v := ledgerView{Rows: map[uint64][]*payment.Row{}}
	var err error
	if v.Batches, err = d.Batches(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, b := range v.Batches {
		d.Rows(b.ID, func(r *payment.Row) (bool, error) {
			v.Rows[b.ID] = append(v.Rows[b.ID], r)
			if r.CheckID != "" {
				ids = append(ids, r.CheckID)
			}
			return true, nil
		})
	}
	if v.Owners, err = d.CheckOwners(ids); err != nil {
		t.Fatal(err)
	}
	return v
}

func testPrune(t *testing.T, be Backend) {
	d := openPrune(t, be)
	old := load(t, d.DB, "old.csv", 5) // every row final, changed long ago
	oldIDs := settle(t, d, old, 2, payment.StatusDeposited, true)
	open := load(t, d.DB, "open.csv", 3) // one check still in process
	settle(t, d, open, 0, payment.StatusPrinted, true)
	pending := load(t, d.DB, "pending.csv", 2) // rows not sent
	l, err := d.BeginBatch(payment.FileMeta{Name: "refused.csv", SHA256: "sha-refused"})
	if err != nil {
		t.Fatal(err)
	}
	refused, err := l.Reject(4, 4, "bad header")
	if err != nil {
		t.Fatal(err)
	}
	unreported := load(t, d.DB, "unreported.csv", 2) // final, results report never delivered
	settle(t, d, unreported, 0, payment.StatusVoid, false)

	d.clock.Set(pruneEpoch.Add(40 * 24 * time.Hour))
	recent := load(t, d.DB, "recent.csv", 2) // final, but changed after the cut-off
	settle(t, d, recent, 0, payment.StatusDeposited, true)

	before := pruneEpoch.Add(30 * 24 * time.Hour)
	var a archiveLog
	sum, err := d.Prune(context.Background(), before, a.archive)
	if err != nil {
		t.Fatal(err)
	}
	if got := prunedIDs(sum); !reflect.DeepEqual(got, []uint64{old.ID, refused.ID}) {
		t.Fatalf("pruned %v, want batches %d and %d", got, old.ID, refused.ID)
	}
	if sum.Rows != 5 || sum.Pruned[0].Rows != 5 || !sum.Pruned[0].LastChange.Before(before) {
		t.Errorf("summary %+v", sum)
	}
	wantKept := map[string]int{"not final": 2, "unreported": 1, "recent": 1}
	if !reflect.DeepEqual(sum.Kept, wantKept) {
		t.Errorf("kept %v, want %v", sum.Kept, wantKept)
	}
	if !reflect.DeepEqual(a.batches, []uint64{old.ID, refused.ID}) || len(a.rows[old.ID]) != 5 || len(a.rows[refused.ID]) != 0 {
		t.Fatalf("archived %v with %d and %d rows", a.batches, len(a.rows[old.ID]), len(a.rows[refused.ID]))
	}
	for i, r := range a.rows[old.ID] {
		if r.Key != key(old, uint32(i+2)) || !r.Final() || r.Payment.BankAccount != "" {
			t.Errorf("archived row %d: %+v", i, r)
		}
	}

	// The batches are gone from everything that lists or finds them.
	for _, id := range []uint64{old.ID, refused.ID} {
		if _, err := d.Batch(id); !errors.Is(err, payment.ErrNotFound) {
			t.Errorf("batch %d after prune: %v", id, err)
		}
	}
	bs, err := d.Batches()
	if err != nil {
		t.Fatal(err)
	}
	var left []uint64
	for _, b := range bs {
		left = append(left, b.ID)
	}
	if want := []uint64{open.ID, pending.ID, unreported.ID, recent.ID}; !reflect.DeepEqual(left, want) {
		t.Errorf("batches left %v, want %v", left, want)
	}
	if n := len(batchRows(t, d.DB, old.ID)); n != 0 {
		t.Errorf("%d rows of the pruned batch left", n)
	}
	owners, err := d.CheckOwners(oldIDs)
	if err != nil || len(owners) != 0 {
		t.Errorf("check ids of the pruned batch still owned: %v (%v)", owners, err)
	}
	if _, err := d.Row(key(old, 2)); !errors.Is(err, payment.ErrNotFound) {
		t.Errorf("row of a pruned batch: %v", err)
	}

	// The content hash stays: the same file again is a duplicate.
	f, err := d.File("sha-old.csv")
	if err != nil || !f.Accepted || f.BatchID != old.ID {
		t.Fatalf("file record after prune: %+v, %v", f, err)
	}
	if _, err := d.BeginBatch(payment.FileMeta{Name: "old-again.csv", SHA256: "sha-old.csv"}); !errors.Is(err, payment.ErrDuplicate) {
		t.Errorf("the pruned file's content again: %v, want ErrDuplicate", err)
	}
	// Batch ids are never given out again.
	next := load(t, d.DB, "next.csv", 1)
	if next.ID <= recent.ID {
		t.Errorf("new batch id %d, want above %d", next.ID, recent.ID)
	}
	d.invariants()

	// A second prune finds nothing more.
	sum, err = d.Prune(context.Background(), before, a.archive)
	if err != nil || len(sum.Pruned) != 0 {
		t.Errorf("second prune: %+v, %v", sum, err)
	}
}

// testPruneArchiverFails: a prune whose archiver fails (a kill between
// the archive and the removal, an error) leaves the whole batch, and the
// next prune archives it again and removes it.
func testPruneArchiverFails(t *testing.T, be Backend) {
	d := openPrune(t, be)
	b := load(t, d.DB, "a.csv", 7)
	ids := settle(t, d, b, 1, payment.StatusDeposited, true)
	before := d.clock.Add(100 * 24 * time.Hour)
	was := look(t, d.DB)
	crash := errors.New("killed")
	archived := 0
	_, err := d.Prune(context.Background(), before, func(b *payment.Batch, rows func(func(*payment.Row) error) error) error {
		archived++
		return crash
	})
	if !errors.Is(err, crash) || archived != 1 {
		t.Fatalf("prune: %v after %d archives, want the archiver's error", err, archived)
	}
	if got := look(t, d.DB); !reflect.DeepEqual(got, was) {
		t.Fatal("a prune that failed in its archive changed the ledger")
	}
	d.invariants()
	var a archiveLog
	sum, err := d.Prune(context.Background(), before, a.archive)
	if err != nil || len(sum.Pruned) != 1 || len(a.rows[b.ID]) != 7 || len(ids) != 6 {
		t.Fatalf("prune after the failure: %+v, %v, archived %v", sum, err, a.batches)
	}
	d.invariants()
}

// testPruneKeepsABatchThatChanges: a row that changes while its batch
// is being archived keeps the batch; the next prune decides again.
func testPruneKeepsABatchThatChanges(t *testing.T, be Backend) {
	d := openPrune(t, be)
	b := load(t, d.DB, "a.csv", 3)
	settle(t, d, b, 0, payment.StatusDeposited, true)
	d.clock.Set(pruneEpoch.Add(100 * 24 * time.Hour))
	before := pruneEpoch.Add(50 * 24 * time.Hour)
	sum, err := d.Prune(context.Background(), before, func(b *payment.Batch, rows func(func(*payment.Row) error) error) error {
		if err := rows(func(*payment.Row) error { return nil }); err != nil {
			return err
		}
		return d.Voided(payment.RowKey{Batch: b.ID, Line: 3}, "a late change")
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Pruned) != 0 || sum.Kept["changed"] != 1 {
		t.Fatalf("summary %+v, want the batch kept as changed", sum)
	}
	batch(t, d.DB, b.ID)
	d.invariants()
	// Now it changed after the cut-off.
	var a archiveLog
	if sum, err = d.Prune(context.Background(), before, a.archive); err != nil || sum.Kept["recent"] != 1 || len(a.batches) != 0 {
		t.Fatalf("second prune: %+v, %v, archived %v", sum, err, a.batches)
	}
}

// testPruneStopsOnCancel: a cancelled context stops between batches.
func testPruneStopsOnCancel(t *testing.T, be Backend) {
	d := openPrune(t, be)
	for i := range 3 {
		settle(t, d, load(t, d.DB, fmt.Sprintf("%d.csv", i), 2), 0, payment.StatusDeposited, true)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sum, err := d.Prune(ctx, d.clock.Add(100*24*time.Hour), func(b *payment.Batch, rows func(func(*payment.Row) error) error) error {
		cancel()
		return rows(func(*payment.Row) error { return nil })
	})
	if !errors.Is(err, context.Canceled) || len(sum.Pruned) != 1 {
		t.Fatalf("prune: %+v, %v; want one batch pruned, then canceled", sum, err)
	}
	d.invariants()
}

func testPruneSources(t *testing.T, be Backend) {
	d := openPrune(t, be)
	pay := load(t, d.DB, "pay.csv", 2)
	settle(t, d, pay, 0, payment.StatusDeposited, true)
	done := loadSources(t, d.DB, "done.csv", payment.KindSources, srcReq(1), srcReq(2), srcReq(3))
	kd := func(line uint32) payment.RowKey { return key(done, line) }
	d.SendSource(kd(2), nil)
	d.RejectSource(kd(2), "invalid routing", "")
	submitSource(t, d.DB, kd(3), "src-3", funding.StatusPending)
	submitSource(t, d.DB, kd(4), "src-4", funding.StatusUnverified)
	ver := loadSources(t, d.DB, "v.csv", payment.KindVerifications, verifyReq("src-3"))
	submitSource(t, d.DB, key(ver, 2), "src-3", funding.StatusVerified)
	d.ObserveSources([]funding.Observation{{Key: kd(3), Status: funding.StatusVerified}}, d.clock.Now())
	tracked := loadSources(t, d.DB, "tracked.csv", payment.KindSources, srcReq(5))
	submitSource(t, d.DB, key(tracked, 2), "src-5", funding.StatusPending)
	unreported := loadSources(t, d.DB, "unreported.csv", payment.KindSources, srcReq(6))
	submitSource(t, d.DB, key(unreported, 2), "src-6", funding.StatusVerified)
	l, _ := d.BeginBatch(payment.FileMeta{Kind: payment.KindSources, Name: "refused.csv", SHA256: "refused"})
	refused, _ := l.Reject(3, 3, "no header")
	for _, b := range []payment.Batch{done, ver, tracked} {
		d.ResultsReported(b.ID)
	}
	d.clock.Set(pruneEpoch.Add(40 * 24 * time.Hour))
	before := pruneEpoch.Add(30 * 24 * time.Hour)

	var got []*funding.Row
	archived := map[uint64]int{}
	sum, err := d.PruneSources(context.Background(), before, func(b *payment.Batch, rows func(func(*funding.Row) error) error) error {
		archived[b.ID] = 0
		return rows(func(r *funding.Row) error { got = append(got, r); archived[b.ID]++; return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	if ids := prunedIDs(sum); !reflect.DeepEqual(ids, []uint64{done.ID, ver.ID, refused.ID}) || sum.Rows != 4 {
		t.Fatalf("pruned %v (%d rows), want batches %d, %d and %d", ids, sum.Rows, done.ID, ver.ID, refused.ID)
	}
	if want := map[string]int{"not final": 1, "unreported": 1}; !reflect.DeepEqual(sum.Kept, want) {
		t.Fatalf("kept %v, want %v", sum.Kept, want)
	}
	if !reflect.DeepEqual(archived, map[uint64]int{done.ID: 3, ver.ID: 1, refused.ID: 0}) || got[0].Key != kd(2) {
		t.Fatalf("archived %v", archived)
	}
	for _, id := range []uint64{done.ID, ver.ID, refused.ID} {
		if _, err := d.Batch(id); !errors.Is(err, payment.ErrNotFound) {
			t.Fatalf("batch %d after prune: %v", id, err)
		}
		if n := len(batchSources(t, d.DB, id)); n != 0 {
			t.Fatalf("%d rows of pruned batch %d left", n, id)
		}
	}
	owners, _ := d.SourceOwners([]string{"src-3", "src-4", "src-5", "src-6"})
	if want := map[string]payment.RowKey{"src-5": key(tracked, 2), "src-6": key(unreported, 2)}; !reflect.DeepEqual(owners, want) {
		t.Fatalf("owners after prune %v", owners)
	}
	if _, err := d.Batch(pay.ID); err != nil {
		t.Fatalf("PruneSources touched the payment batch: %v", err)
	}
	// Prune takes the payment batch and leaves the funding batches.
	var a archiveLog
	psum, err := d.Prune(context.Background(), before, a.archive)
	if err != nil || !reflect.DeepEqual(prunedIDs(psum), []uint64{pay.ID}) || len(psum.Kept) != 0 {
		t.Fatalf("payment prune %+v %v", psum, err)
	}
	bs, _ := d.Batches()
	if len(bs) != 2 || bs[0].ID != tracked.ID || bs[1].ID != unreported.ID {
		t.Fatalf("batches left %+v", bs)
	}
	d.invariants()
}
