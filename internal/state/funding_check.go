package state

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// sourceBuckets are the funding rows' buckets. A ledger of schema 1 (from
// before funding rows, such as an old snapshot) has none of them; from
// schema 2 on every one must be there.
var sourceBuckets = [][]byte{bucketSrcRows, bucketSrcOpen, bucketSrcTrack, bucketSrcIDs}

// sourceInvariants checks the funding rows as invariants checks the
// payment rows: each decodes, has a legal state, belongs to a funding
// batch (whose tally it adds to); src_open holds exactly the rows without
// a result, with their state; src_track exactly the submitted rows whose
// status is Tracked; a row has a source id exactly when it is submitted;
// and src_ids maps each source id to the one row that owns it, never a
// Verify row. Rows are read once, in key order, beside the two indexes.
func (r *Report) sourceInvariants(tx kv.Tx, batches map[uint64]*payment.Batch, tally map[uint64]map[payment.RowState]int) {
	var missing [][]byte
	for _, name := range sourceBuckets {
		if tx.Bucket(name) == nil {
			missing = append(missing, name)
		}
	}
	if len(missing) == len(sourceBuckets) && schemaOf(tx) < 2 {
		return // a ledger from before funding rows: its batch counts are checked still
	}
	for _, name := range missing {
		r.add("ledger", "the %q bucket is missing", name)
	}
	if len(missing) > 0 {
		return
	}
	rows, ids := tx.Bucket(bucketSrcRows), tx.Bucket(bucketSrcIDs)
	oc, tc := tx.Bucket(bucketSrcOpen).Cursor(), tx.Bucket(bucketSrcTrack).Cursor()
	ok, ov := oc.First()
	tk, _ := tc.First()
	orphan := func(index string, k []byte) {
		r.add("funding "+keyName(k), "the %s index names a funding row that does not exist", index)
	}
	idFault := false
	rc := rows.Cursor()
	for k, v := rc.First(); k != nil; k, v = rc.Next() {
		for ok != nil && bytes.Compare(ok, k) < 0 {
			orphan("src_open", ok)
			ok, ov = oc.Next()
		}
		for tk != nil && bytes.Compare(tk, k) < 0 {
			orphan("src_track", tk)
			tk, _ = tc.Next()
		}
		inOpen, inTrack := ok != nil && bytes.Equal(ok, k), tk != nil && bytes.Equal(tk, k)
		openState := payment.RowState(ov)
		if inOpen {
			ok, ov = oc.Next()
		}
		if inTrack {
			tk, _ = tc.Next()
		}
		if len(k) != 12 {
			r.add("src_rows", "a row key of %d bytes (want 12)", len(k))
			continue
		}
		key := keyFrom(k)
		where := "funding " + key.String()
		if v == nil {
			r.add(where, "is a bucket, not a row")
			continue
		}
		row, err := decodeSource(key, v)
		if err != nil {
			r.add(where, "does not decode: %v", errors.Unwrap(err))
			continue
		}
		r.Rows++
		r.SourceRows++
		if !legal(row.State) {
			r.add(where, "has the unknown state %q", row.State)
			continue
		}
		r.ByState[row.State]++
		if b, ok := batches[key.Batch]; !ok {
			r.add(where, "belongs to batch %d, which the ledger does not have", key.Batch)
		} else {
			if b.Kind.Payments() {
				r.add(where, "is a funding row of batch %d, a payment batch", key.Batch)
			}
			if tally[key.Batch] == nil {
				tally[key.Batch] = map[payment.RowState]int{}
			}
			tally[key.Batch][row.State]++
		}
		switch {
		case row.State.Open() && !inOpen:
			r.add(where, "is %s but missing from the src_open index", row.State)
		case row.State.Open() && openState != row.State:
			r.add(where, "is %s but the src_open index says %q", row.State, openState)
		case !row.State.Open() && inOpen:
			r.add(where, "is %s but still in the src_open index", row.State)
		}
		switch want := sourceTracked(row); {
		case want && !inTrack:
			r.add(where, "has a source still %s but is missing from the src_track index", row.Status)
		case !want && inTrack:
			r.add(where, "is in the src_track index but is %s with source status %s", row.State, orNone(payment.Status(row.Status)))
		}
		switch {
		case row.State == payment.Submitted && row.SourceID == "":
			r.add(where, "is submitted without a source id")
		case row.State != payment.Submitted && row.SourceID != "":
			r.add(where, "is %s but has source %s", row.State, row.SourceID)
		}
		owner := ids.Get([]byte(row.SourceID))
		switch {
		case row.SourceID == "":
		case !ownsSource(row):
			if bytes.Equal(owner, k) {
				idFault = true
				r.add(where, "is a verification of source %s, but the src_ids index gives the source to it", row.SourceID)
			}
		case owner == nil:
			idFault = true
			r.add(where, "owns source %s, which is missing from the src_ids index", row.SourceID)
		case !bytes.Equal(owner, k):
			idFault = true
			r.add(where, "owns source %s, which the src_ids index gives to %s: a source id owned by two rows", row.SourceID, keyName(owner))
		default:
			r.Sources++
		}
	}
	for ; ok != nil; ok, _ = oc.Next() {
		orphan("src_open", ok)
	}
	for ; tk != nil; tk, _ = tc.Next() {
		orphan("src_track", tk)
	}
	if n := ids.KeyN(); n != r.Sources || idFault {
		r.sourceIDs(ids, rows)
	}
}

// sourceIDs names the src_ids entries that no row owns: an entry naming a
// row that does not exist, whose source is another, or that is a Verify
// row.
func (r *Report) sourceIDs(ids, rows kv.Bucket) {
	_ = ids.ForEach(func(id, k []byte) error {
		where := "funding source " + string(id)
		raw := rows.Get(k)
		if len(k) != 12 || raw == nil {
			r.add(where, "the src_ids index names %s, which does not exist", keyName(k))
			return nil
		}
		row, err := decodeSource(keyFrom(k), raw)
		switch {
		case err != nil:
		case row.Request.Method == funding.Verify:
			r.add(where, "the src_ids index names %s, a verification, which never owns its source", row.Key)
		case row.SourceID != string(id):
			other := row.SourceID
			if other == "" {
				other = "none"
			}
			r.add(where, "the src_ids index names %s, whose source is %s", row.Key, other)
		}
		return nil
	})
}

// schemaOf is the schema version tx's ledger says it has, 0 for none.
func schemaOf(tx kv.Tx) uint64 {
	if raw := tx.Bucket(bucketMeta).Get(keySchema); len(raw) == 8 {
		return binary.BigEndian.Uint64(raw)
	}
	return 0
}
