package state

import (
	"context"
	"errors"
	"fmt"
	boltkv "github.com/batchd/batchd/internal/state/bolt"
	"github.com/batchd/batchd/internal/state/kv"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	bolt "go.etcd.io/bbolt"
)

// fundingLedger holds a payment batch, a funding-source batch (line 2
// pending, 3 submitted src-3, 4 submitted src-4, 5 in doubt, 6 rejected)
// and a verification batch (line 2 verifies src-3).
func fundingLedger(t *testing.T, d *DB) (pb, sb, vb payment.Batch) {
	t.Helper()
	pb = load(t, d, "pay.csv", 3)
	d.Send(payment.RowKey{Batch: pb.ID, Line: 2})
	d.Created(payment.RowKey{Batch: pb.ID, Line: 2}, payment.CheckResult{CheckID: "chk-2", Status: "in_process"})
	sb = loadSources(t, d, "src.csv", payment.KindSources, srcReq(1), srcReq(2), srcReq(3), srcReq(4), srcReq(5))
	k := func(line uint32) payment.RowKey { return payment.RowKey{Batch: sb.ID, Line: line} }
	submitSource(t, d, k(3), "src-3", funding.StatusPending)
	submitSource(t, d, k(4), "src-4", funding.StatusUnverified)
	d.SendSource(k(5), nil)
	d.DoubtSource(k(5), "timeout")
	d.SendSource(k(6), nil)
	d.RejectSource(k(6), "This bank account is associated with another user", "")
	vb = loadSources(t, d, "v.csv", payment.KindVerifications, verifyReq("src-3"))
	submitSource(t, d, payment.RowKey{Batch: vb.ID, Line: 2}, "src-3", funding.StatusVerified)
	return pb, sb, vb
}

func TestCheckFundingInvariants(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir)
	pb, sb, vb := fundingLedger(t, d)
	d.Close()
	path := filepath.Join(dir, FileName)
	rep, err := CheckFile(path)
	if err != nil || !rep.OK() || rep.Rows != 9 || rep.SourceRows != 6 || rep.Sources != 2 || rep.Checks != 1 ||
		rep.ByState[payment.Submitted] != 4 || rep.ByState[payment.Pending] != 3 {
		t.Fatalf("good ledger: %+v %v", rep, err)
	}
	if !strings.Contains(rep.Summary(), "6 funding rows, 2 funding sources") {
		t.Errorf("summary %q", rep.Summary())
	}

	k := func(b payment.Batch, line uint32) []byte { return keyBytes(payment.RowKey{Batch: b.ID, Line: line}) }
	bd, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bd.Update(func(btx *bolt.Tx) error {
		tx := boltkv.Tx(btx)
		open, track, ids := tx.Bucket(bucketSrcOpen), tx.Bucket(bucketSrcTrack), tx.Bucket(bucketSrcIDs)
		open.Delete(k(sb, 2))     // a pending row missing from src_open
		track.Put(k(sb, 99), nil) // an entry without a row
		// Row 4 claims row 3's source: one source owned by two rows.
		r4, _ := getSource(tx, payment.RowKey{Batch: sb.ID, Line: 4})
		r4.SourceID = "src-3"
		putSource(tx, r4)
		// The verification is indexed as src-9's owner.
		ids.Put([]byte("src-9"), k(vb, 2))
		// Row 5 is in doubt but says "paid"; a funding row sits in the
		// payment batch.
		r5, _ := getSource(tx, payment.RowKey{Batch: sb.ID, Line: 5})
		r5.State = "paid"
		putSource(tx, r5)
		stray, _ := getSource(tx, payment.RowKey{Batch: sb.ID, Line: 2})
		stray.Key = payment.RowKey{Batch: pb.ID, Line: 50}
		putSource(tx, stray)
		open.Put(k(pb, 50), []byte("pending"))
		tx.Bucket(bucketSrcRows).Put(k(sb, 7), []byte("{not json"))
		bt, _ := getBatch(tx, sb.ID)
		bt.Counts[payment.Rejected] += 2
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
		fmt.Sprintf("funding batch %d line 2: is pending but missing from the src_open index", sb.ID),
		fmt.Sprintf("funding batch %d line 99: the src_track index names a funding row that does not exist", sb.ID),
		fmt.Sprintf("funding batch %d line 4: owns source src-3, which the src_ids index gives to batch %d line 3: a source id owned by two rows", sb.ID, sb.ID),
		fmt.Sprintf("funding source src-4: the src_ids index names batch %d line 4, whose source is src-3", sb.ID),
		fmt.Sprintf("funding source src-9: the src_ids index names batch %d line 2, a verification", vb.ID),
		fmt.Sprintf("funding batch %d line 5: has the unknown state \"paid\"", sb.ID),
		fmt.Sprintf("funding batch %d line 50: is a funding row of batch %d, a payment batch", pb.ID, pb.ID),
		fmt.Sprintf("funding batch %d line 7: does not decode", sb.ID),
		fmt.Sprintf("batch %d: counts", sb.ID),
		fmt.Sprintf("batch %d: counts", pb.ID),
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no fault %q in:\n%s", want, all)
		}
	}
	if strings.Contains(all, "11110000") {
		t.Errorf("a fault shows an account number:\n%s", all)
	}
}

func TestCheckFundingBuckets(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir)
	load(t, d, "pay.csv", 2)
	d.Close()
	path := filepath.Join(dir, FileName)
	edit := func(fn func(tx *bolt.Tx) error) {
		t.Helper()
		bd, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer bd.Close()
		if err := bd.Update(fn); err != nil {
			t.Fatal(err)
		}
	}
	// Schema 2 without src_track is damaged.
	edit(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketSrcTrack) })
	rep, err := CheckFile(path)
	if err != nil || rep.OK() || !strings.Contains(rep.Faults[0].String(), `the "src_track" bucket is missing`) {
		t.Fatalf("missing src_track: %+v %v", rep, err)
	}
	// A ledger of schema 1 (an old snapshot) has none, and is sound.
	edit(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketSrcRows, bucketSrcOpen, bucketSrcIDs} {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchema, u64(1))
	})
	if rep, err := CheckFile(path); err != nil || !rep.OK() || rep.Rows != 2 {
		t.Fatalf("schema 1 ledger: %+v %v", rep, err)
	}
	// Opening it migrates it: the buckets are made, the schema is 2.
	d = open(t, dir)
	sb := loadSources(t, d, "src.csv", payment.KindSources, srcReq(1))
	if got := srcKeys(t, d.OpenSourceRows); len(got) != 1 || got[0].Batch != sb.ID {
		t.Fatalf("open funding rows after the migration: %v", got)
	}
	var schema uint64
	d.view(func(tx kv.Tx) error { schema = schemaOf(tx); return nil })
	if schema != SchemaVersion || SchemaVersion != 2 {
		t.Fatalf("schema %d after open, want %d", schema, SchemaVersion)
	}
	wantInvariants(t, d)
}

func TestRestoreSuspectsFundingRows(t *testing.T) {
	dir := t.TempDir()
	clock := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	d, err := Open(dir, Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	pb, sb, vb := fundingLedger(t, d)
	k := func(line uint32) payment.RowKey { return payment.RowKey{Batch: sb.ID, Line: line} }
	clock = clock.Add(time.Hour)
	snapAt := clock
	snap := filepath.Join(t.TempDir(), "snap.db")
	if _, err := d.Backup(snap); err != nil {
		t.Fatal(err)
	}
	d.Close()
	res, err := Restore(dir, snap, RestoreOptions{Now: func() time.Time { return snapAt.Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	// Payment rows 3 and 4; funding rows 2 (pending) and 5 (in doubt).
	if res.Mark.RowsInDoubt != 4 || !res.Report.OK() || res.Report.SourceRows != 6 {
		t.Fatalf("restoral %+v, report %+v", res.Mark, res.Report)
	}
	d = open(t, dir)
	for _, line := range []uint32{2, 5} {
		r, err := d.SourceRow(k(line))
		if err != nil || r.State != payment.InDoubt || r.History[len(r.History)-1].Via != payment.Suspect || r.AttemptAt.After(snapAt) {
			t.Fatalf("funding row %d after restore: %+v %v", line, r, err)
		}
	}
	if r, _ := d.SourceRow(k(2)); !r.AttemptAt.Equal(snapAt) {
		t.Fatalf("a never-sent row's attempt %v, want the snapshot's time", r.AttemptAt)
	}
	for _, kk := range []payment.RowKey{k(3), k(4), k(6), {Batch: vb.ID, Line: 2}} {
		if r, _ := d.SourceRow(kk); r.State.Open() || r.History[len(r.History)-1].Via == payment.Suspect {
			t.Fatalf("row %s with a result was suspected: %+v", kk, r)
		}
	}
	if r, _ := d.Row(payment.RowKey{Batch: pb.ID, Line: 3}); r.State != payment.InDoubt {
		t.Fatalf("payment row after restore: %s", r.State)
	}
	bb, _ := d.Batch(sb.ID)
	if bb.Counts[payment.InDoubt] != 2 || bb.Counts[payment.Pending] != 0 {
		t.Fatalf("counts %v", bb.Counts)
	}
	wantInvariants(t, d)
}

func TestPruneSources(t *testing.T) {
	d, clk := openClock(t, t.TempDir(), 3)
	pay := load(t, d, "pay.csv", 2)
	settle(t, d, pay, 0, payment.StatusDeposited, true)
	done := loadSources(t, d, "done.csv", payment.KindSources, srcReq(1), srcReq(2), srcReq(3))
	kd := func(line uint32) payment.RowKey { return payment.RowKey{Batch: done.ID, Line: line} }
	d.SendSource(kd(2), nil)
	d.RejectSource(kd(2), "invalid routing", "")
	submitSource(t, d, kd(3), "src-3", funding.StatusPending)
	submitSource(t, d, kd(4), "src-4", funding.StatusUnverified)
	ver := loadSources(t, d, "v.csv", payment.KindVerifications, verifyReq("src-3"))
	submitSource(t, d, payment.RowKey{Batch: ver.ID, Line: 2}, "src-3", funding.StatusVerified)
	d.ObserveSources([]funding.Observation{{Key: kd(3), Status: funding.StatusVerified}}, d.now())
	tracked := loadSources(t, d, "tracked.csv", payment.KindSources, srcReq(5))
	submitSource(t, d, payment.RowKey{Batch: tracked.ID, Line: 2}, "src-5", funding.StatusPending)
	unreported := loadSources(t, d, "unreported.csv", payment.KindSources, srcReq(6))
	submitSource(t, d, payment.RowKey{Batch: unreported.ID, Line: 2}, "src-6", funding.StatusVerified)
	l, _ := d.BeginBatch(payment.FileMeta{Kind: payment.KindSources, Name: "refused.csv", SHA256: "refused"})
	refused, _ := l.Reject(3, 3, "no header")
	for _, b := range []payment.Batch{done, ver, tracked} {
		d.ResultsReported(b.ID)
	}
	clk.set(pruneEpoch.Add(40 * 24 * time.Hour))
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
		if n := len(srcKeys(t, func(fn func(*funding.Row) (bool, error)) error { return d.SourceRows(id, fn) })); n != 0 {
			t.Fatalf("%d rows of pruned batch %d left", n, id)
		}
	}
	owners, _ := d.SourceOwners([]string{"src-3", "src-4", "src-5", "src-6"})
	if want := map[string]payment.RowKey{"src-5": {Batch: tracked.ID, Line: 2}, "src-6": {Batch: unreported.ID, Line: 2}}; !reflect.DeepEqual(owners, want) {
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
	checkInvariants(t, d)
	wantInvariants(t, d)
}
