package state

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	boltkv "github.com/batchd/batchd/internal/state/bolt"
	"github.com/batchd/batchd/internal/state/kv"
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
		r4, _ := sourceRows.get(nil, tx, payment.RowKey{Batch: sb.ID, Line: 4})
		r4.SourceID = "src-3"
		sourceRows.put(nil, tx, r4)
		// The verification is indexed as src-9's owner.
		ids.Put([]byte("src-9"), k(vb, 2))
		// Row 5 is in doubt but says "paid"; a funding row sits in the
		// payment batch.
		r5, _ := sourceRows.get(nil, tx, payment.RowKey{Batch: sb.ID, Line: 5})
		r5.State = "paid"
		sourceRows.put(nil, tx, r5)
		stray, _ := sourceRows.get(nil, tx, payment.RowKey{Batch: sb.ID, Line: 2})
		stray.Key = payment.RowKey{Batch: pb.ID, Line: 50}
		sourceRows.put(nil, tx, stray)
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
