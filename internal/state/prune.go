package state

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// Retention. A batch whose every row is final (rejected, or submitted
// with a final check status) and whose last change is old enough can be
// pruned: its rows are handed to an Archiver, which writes them somewhere
// durable (the archive report), and only then are the batch, its rows and
// its index entries removed, in one transaction. A process killed at any
// instant therefore leaves either the whole batch (perhaps with its
// archive already written, which the next prune writes again) or the
// archive and no batch: never half a batch.
//
// Funding batches (funding-source and verification files) are pruned by
// the same rules, apart: Prune takes only payment batches, PruneSources
// (funding_prune.go) only funding ones, each with an archiver of its own
// rows.
//
// What prune keeps: the file's content hash (the files bucket), so that
// the same content dropped again is still refused as a duplicate instead
// of being paid a second time; and the sequences of batch ids and check
// numbers, so that no id or label is ever given out twice.

// PrunedBatch is one batch a prune removed.
type PrunedBatch struct {
	Batch      payment.Batch
	Rows       int
	LastChange time.Time // the latest history step (or check date) of any row
}

// PruneSummary says what one Prune did.
type PruneSummary struct {
	Pruned []PrunedBatch
	Rows   int // rows removed, over all pruned batches
	// Kept counts batches left in place, by reason: "not final" (a row
	// has no check yet, or its check is not final), "recent" (changed
	// on or after the cut-off), "unreported" (its results report was
	// never delivered), "loading", "changed" (it changed while being
	// archived; the next prune tries again).
	Kept map[string]int
}

// Archiver writes the rows of a batch about to be pruned somewhere
// durable, and returns nil only once they are: the batch is removed only
// after it returns nil. rows calls fn with every row of the batch in line
// order and returns fn's first error. An Archiver may be called again for
// the same batch (after a crash, or when the batch changed meanwhile), so
// it replaces what an earlier call wrote.
type Archiver func(b *payment.Batch, rows func(fn func(*payment.Row) error) error) error

// errPruneChanged means a batch no longer matched what was archived or
// checked: it is kept, and the next prune tries again.
var errPruneChanged = errors.New("the batch changed while it was being pruned")

// testHookPruneTx, when set, runs at the end of a prune transaction; an
// error it returns rolls the transaction back. Tests use it to fail a
// prune between its archive and its commit.
var testHookPruneTx func(batch uint64) error

// Prune removes every payment batch that is finished and whose last
// change is before before, oldest first, after archive has written its
// rows. A batch is finished when it was refused (it has no rows), or when
// it is ready, its every row is final and its results report has been
// delivered. Loading batches are never touched, nor funding batches
// (PruneSources prunes those). It stops at the first error of archive or
// of the ledger, having pruned the batches before it, and between batches
// when ctx is done.
func (d *DB) Prune(ctx context.Context, before time.Time, archive Archiver) (PruneSummary, error) {
	return d.prune(ctx, before, paymentRows.rowKind, paymentRows.archiver(archive))
}

// rowKind is what prune needs to know of one kind of row: which batches
// hold it, its buckets, and what a stored row says of itself.
type rowKind struct {
	payments                  bool // payment batches, or funding ones
	rows, open, track, owners []byte
	// facts decodes a stored row: whether nothing more will happen to
	// it, when it last changed, and the id it owns in owners ("" for
	// none). withFacts sets it from a rowType.
	facts func(k, v []byte) (final bool, last time.Time, owns string, err error)
}

// rawArchiver is an Archiver before rows are decoded: raw calls fn with
// the stored key and value of every row of b in line order.
type rawArchiver func(b *payment.Batch, raw func(fn func(k, v []byte) error) error) error

// prune is Prune for the batches of one kind of row.
func (d *DB) prune(ctx context.Context, before time.Time, kind rowKind, archive rawArchiver) (PruneSummary, error) {
	sum := PruneSummary{Kept: map[string]int{}}
	batches, err := d.Batches()
	if err != nil {
		return sum, fmt.Errorf("prune: %w", err)
	}
	for i := range batches {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		b := &batches[i]
		if b.Kind.Payments() != kind.payments {
			continue // the other prune's
		}
		if why := d.keepBatch(b, before, kind); why != "" {
			sum.Kept[why]++
			continue
		}
		check, why, err := d.pruneCheck(b.ID, before, kind)
		if err != nil {
			return sum, fmt.Errorf("prune batch %d (%s): %w", b.ID, b.File, err)
		}
		if why != "" {
			sum.Kept[why]++
			continue
		}
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		var archived pruneDigest
		err = archive(b, func(fn func(k, v []byte) error) error {
			archived = newPruneDigest()
			return d.scanRaw(kind.rows, b.ID, func(k, v []byte) error {
				archived.add(k, v)
				return fn(k, v)
			})
		})
		if err != nil {
			return sum, fmt.Errorf("prune batch %d (%s): archive: %w", b.ID, b.File, err)
		}
		if archived.h == nil { // the archiver read no rows: right only when there are none
			archived = newPruneDigest()
		}
		if archived.sum() != check.digest {
			sum.Kept["changed"]++
			continue
		}
		err = d.pruneTx(b, before, check.digest, kind)
		if errors.Is(err, errPruneChanged) {
			sum.Kept["changed"]++
			continue
		}
		if err != nil {
			return sum, fmt.Errorf("prune batch %d (%s): %w", b.ID, b.File, err)
		}
		sum.Pruned = append(sum.Pruned, PrunedBatch{Batch: *b, Rows: check.rows, LastChange: check.last})
		sum.Rows += check.rows
	}
	return sum, nil
}

// keepBatch says from the batch record alone why b cannot be pruned, or
// "" when its rows must be looked at.
func (d *DB) keepBatch(b *payment.Batch, before time.Time, kind rowKind) string {
	switch {
	case b.Status == payment.BatchLoading:
		return "loading"
	case !b.Created.Before(before):
		// No row changed before its batch was created.
		return "recent"
	case b.Status == payment.BatchRejected:
		return ""
	case b.Status != payment.BatchReady:
		return "not final"
	case b.OpenRows() > 0:
		return "not final"
	case b.ResultsReported.IsZero():
		return "unreported"
	}
	tracked := false
	err := d.view(func(tx kv.Tx) error {
		k, _ := tx.Bucket(kind.track).Cursor().Seek(u64(b.ID))
		tracked = k != nil && hasPrefix(k, u64(b.ID))
		return nil
	})
	if err == nil && tracked {
		return "not final"
	}
	return "" // a read error is met again, and reported, by pruneCheck
}

// pruneCheckResult is what the check of a batch's rows found.
type pruneCheckResult struct {
	rows   int
	last   time.Time
	digest uint64
}

// pruneCheck reads every row of a batch and says why it must be kept, or
// "" with the rows' count, last change and digest.
func (d *DB) pruneCheck(batch uint64, before time.Time, kind rowKind) (pruneCheckResult, string, error) {
	var (
		res pruneCheckResult
		why string
	)
	dg := newPruneDigest()
	err := d.scanRaw(kind.rows, batch, func(k, v []byte) error {
		dg.add(k, v)
		final, last, _, err := kind.facts(k, v)
		if err != nil {
			return err
		}
		res.rows++
		if !final {
			why = "not final"
			return errStopScan
		}
		if !last.Before(before) {
			why = "recent"
			return errStopScan
		}
		if last.After(res.last) {
			res.last = last
		}
		return nil
	})
	if errors.Is(err, errStopScan) {
		err = nil
	}
	res.digest = dg.sum()
	return res, why, err
}

var errStopScan = errors.New("stop scan")

// lastChange is when the row last changed: its latest history step, or
// the check's date at the service when that is later (the service's clock
// may run ahead of batchd's).
func lastChange(r *payment.Row) time.Time {
	var t time.Time
	for _, s := range r.History {
		if s.At.After(t) {
			t = s.At
		}
	}
	if r.CheckCreated.After(t) {
		t = r.CheckCreated
	}
	return t
}

// pruneTx removes a batch, its rows and their index entries in one
// transaction, after checking again that every row is final and old
// enough and that the rows are byte for byte those archived.
func (d *DB) pruneTx(b *payment.Batch, before time.Time, digest uint64, kind rowKind) error {
	prefix := u64(b.ID)
	return d.update(func(tx kv.Tx) error {
		cur, err := getBatch(tx, b.ID)
		if err != nil {
			if errors.Is(err, payment.ErrNotFound) {
				return errPruneChanged
			}
			return err
		}
		if cur.Status != b.Status || cur.OpenRows() > 0 {
			return errPruneChanged
		}
		// Only a declared prune may remove a check or source id: the
		// database refuses it elsewhere (kv.Tx DeclarePrune).
		if err := tx.DeclarePrune(); err != nil {
			return err
		}
		rows, owners := tx.Bucket(kind.rows), tx.Bucket(kind.owners)
		open, track := tx.Bucket(kind.open), tx.Bucket(kind.track)
		dg := newPruneDigest()
		// The rows are read first and removed after: seeking the batch's
		// first key again after each removal would step over every leaf
		// already emptied (bbolt merges them only at commit), which makes
		// a large batch take quadratic time.
		var lines []uint32
		c := rows.Cursor()
		for k, v := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, v = c.Next() {
			dg.add(k, v)
			final, last, owns, err := kind.facts(k, v)
			if err != nil {
				return err
			}
			if !final || !last.Before(before) {
				return errPruneChanged
			}
			if owns != "" {
				if owner := owners.Get([]byte(owns)); owner != nil && bytes.Equal(owner, k) {
					if err := owners.Delete([]byte(owns)); err != nil {
						return err
					}
				}
			}
			lines = append(lines, keyFrom(k).Line)
		}
		marks := make([][]byte, 0, len(lines))
		for _, line := range lines {
			k := keyBytes(payment.RowKey{Batch: b.ID, Line: line})
			// A final row is in neither index; removing is harmless.
			for _, bk := range []kv.Bucket{rows, open, track} {
				if err := bk.Delete(k); err != nil {
					return err
				}
			}
			marks = append(marks, k)
		}
		if kind.payments {
			if err := deleteMarks(tx, marks); err != nil {
				return err
			}
		}
		if dg.sum() != digest {
			return errPruneChanged
		}
		if err := tx.Bucket(bucketBatches).Delete(prefix); err != nil {
			return err
		}
		if testHookPruneTx != nil {
			return testHookPruneTx(b.ID)
		}
		return nil
	})
}

// scanRaw calls fn with the stored key and value of every row of a batch
// in bucket (bucketRows, bucketSrcRows) in line order, reading in chunks of short read transactions as scan
// does, so that fn may take its time (write a report, upload it). The
// slices are fn's only for the call.
func (d *DB) scanRaw(bucket []byte, batch uint64, fn func(k, v []byte) error) error {
	const chunk = 1000
	prefix := u64(batch)
	var after []byte
	type pair struct{ k, v []byte }
	buf := make([]pair, 0, chunk)
	for {
		buf = buf[:0]
		end := false
		err := d.view(func(tx kv.Tx) error {
			c := tx.Bucket(bucket).Cursor()
			k, v := c.Seek(prefix)
			if after != nil {
				k, v = c.Seek(after)
				if k != nil && bytes.Equal(k, after) {
					k, v = c.Next()
				}
			}
			for ; k != nil && hasPrefix(k, prefix) && len(buf) < chunk; k, v = c.Next() {
				buf = append(buf, pair{bytes.Clone(k), bytes.Clone(v)})
			}
			end = k == nil || !hasPrefix(k, prefix)
			return nil
		})
		if err != nil {
			return err
		}
		for _, e := range buf {
			if err := fn(e.k, e.v); err != nil {
				return err
			}
		}
		if end {
			return nil
		}
		after = buf[len(buf)-1].k
	}
}

// pruneDigest fingerprints a batch's stored rows, so that a prune removes
// exactly the rows it archived.
type pruneDigest struct{ h hash.Hash64 }

func newPruneDigest() pruneDigest { return pruneDigest{fnv.New64a()} }

func (p pruneDigest) add(k, v []byte) {
	var n [4]byte
	for _, b := range [][]byte{k, v} {
		p.h.Write(binary.BigEndian.AppendUint32(n[:0], uint32(len(b))))
		p.h.Write(b)
	}
}

func (p pruneDigest) sum() uint64 { return p.h.Sum64() }
