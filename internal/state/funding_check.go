package state

import (
	"encoding/binary"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// sourceBuckets are the funding rows' buckets. A ledger of schema 1 (from
// before funding rows, such as an old snapshot) has none of them; from
// schema 2 on every one must be there.
var sourceBuckets = [][]byte{bucketSrcRows, bucketSrcOpen, bucketSrcTrack, bucketSrcIDs}

// sourceInvariants checks the funding rows as invariants checks the
// payment rows (rowcheck.go), once their buckets are all there: src_ids
// maps each source id to the one row that owns it, never a Verify row.
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
	sourceRows.walk(r, tx, batches, tally)
}

// schemaOf is the schema version tx's ledger says it has, 0 for none.
func schemaOf(tx kv.Tx) uint64 {
	if raw := tx.Bucket(bucketMeta).Get(keySchema); len(raw) == 8 {
		return binary.BigEndian.Uint64(raw)
	}
	return 0
}
