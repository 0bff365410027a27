package state

import (
	"encoding/json"
	"fmt"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// Row returns one row.
func (d *DB) Row(k payment.RowKey) (*payment.Row, error) {
	var r *payment.Row
	err := d.readRows(1, func(tx kv.Tx) (err error) {
		r, err = paymentRows.get(d.ring(), tx, k)
		return err
	})
	return r, err
}

// RowsByKey returns the rows under keys, in their order, in one read
// transaction, the rows read together (kv.Bucket.GetMany: one round trip
// on PostgreSQL, not one a row). A key with no row fails it, wrapping
// payment.ErrNotFound, as Row does.
func (d *DB) RowsByKey(keys []payment.RowKey) ([]*payment.Row, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	var rows []*payment.Row
	err := d.readRows(len(keys), func(tx kv.Tx) (err error) {
		rows, err = paymentRows.getMany(d)(tx, keys)
		return err
	})
	return rows, err
}

// RowByCheck returns the row whose check has the given id.
func (d *DB) RowByCheck(checkID string) (*payment.Row, error) {
	var r *payment.Row
	err := d.view(func(tx kv.Tx) error {
		k := tx.Bucket(bucketChecks).Get([]byte(checkID))
		if k == nil {
			return fmt.Errorf("check %s: %w", checkID, payment.ErrNotFound)
		}
		var err error
		r, err = paymentRows.get(d.ring(), tx, keyFrom(k))
		return err
	})
	return r, err
}

// CheckOwner returns the row that owns checkID, if any. Submit uses it so
// that a lookup never binds a check that already belongs to another row.
func (d *DB) CheckOwner(checkID string) (payment.RowKey, bool, error) {
	var (
		k  payment.RowKey
		ok bool
	)
	err := d.view(func(tx kv.Tx) error {
		if raw := tx.Bucket(bucketChecks).Get([]byte(checkID)); raw != nil {
			k, ok = keyFrom(raw), true
		}
		return nil
	})
	return k, ok, err
}

// CheckOwners returns the rows that own the given check ids, in one read
// transaction: reconcile looks up a whole page of listed checks at once.
// Ids that no row owns are absent from the map.
func (d *DB) CheckOwners(ids []string) (map[string]payment.RowKey, error) {
	return paymentRows.ownersOf(d, ids)
}

// OwnerRows returns the rows that own the given check ids, by id, in one
// read transaction. Ids that no row owns are absent from the map. The
// index and the rows are each read together (kv.Bucket.GetMany: a round
// trip each on PostgreSQL, not two an id), since reconcile asks a whole
// page of checks at once.
func (d *DB) OwnerRows(ids []string) (map[string]*payment.Row, error) {
	out := make(map[string]*payment.Row, len(ids))
	err := d.readRows(2*len(ids), func(tx kv.Tx) error {
		raw := make([][]byte, len(ids))
		for i, id := range ids {
			raw[i] = []byte(id)
		}
		var owned []string
		var keys []payment.RowKey
		for i, v := range tx.Bucket(bucketChecks).GetMany(raw) {
			if v != nil {
				owned, keys = append(owned, ids[i]), append(keys, keyFrom(v))
			}
		}
		rows, err := paymentRows.getMany(d)(tx, keys)
		if err != nil {
			return fmt.Errorf("the rows of %d checks: %w", len(keys), err)
		}
		for i, id := range owned {
			out[id] = rows[i]
		}
		return nil
	})
	return out, err
}

// Batch returns one batch.
func (d *DB) Batch(id uint64) (*payment.Batch, error) {
	var b *payment.Batch
	err := d.view(func(tx kv.Tx) (err error) {
		b, err = getBatch(tx, id)
		return err
	})
	return b, err
}

// Batches returns every batch, oldest first.
func (d *DB) Batches() ([]payment.Batch, error) {
	var out []payment.Batch
	err := d.view(func(tx kv.Tx) error {
		return tx.Bucket(bucketBatches).ForEach(func(k, v []byte) error {
			var b payment.Batch
			if err := json.Unmarshal(v, &b); err != nil {
				return fmt.Errorf("decode batch: %w", err)
			}
			if b.Counts == nil {
				b.Counts = map[payment.RowState]int{}
			}
			out = append(out, b)
			return nil
		})
	})
	return out, err
}

// File returns what the ledger knows of a file's content.
func (d *DB) File(sha256 string) (*payment.File, error) {
	var f *payment.File
	err := d.view(func(tx kv.Tx) error {
		raw := tx.Bucket(bucketFiles).Get([]byte(sha256))
		if raw == nil {
			return fmt.Errorf("file %s: %w", sha256, payment.ErrNotFound)
		}
		f = &payment.File{}
		return json.Unmarshal(raw, f)
	})
	return f, err
}

// FileMoved records where the remote file went after its batch was
// committed, so that a restart does not try to move it again.
func (d *DB) FileMoved(sha256, path string) error {
	err := d.update(func(tx kv.Tx) error {
		b := tx.Bucket(bucketFiles)
		raw := b.Get([]byte(sha256))
		if raw == nil {
			return fmt.Errorf("file %s: %w", sha256, payment.ErrNotFound)
		}
		var f payment.File
		if err := json.Unmarshal(raw, &f); err != nil {
			return err
		}
		f.Moved = path
		return putFile(tx, &f)
	})
	if err != nil {
		return fmt.Errorf("record move of %s: %w", path, err)
	}
	return nil
}

// ResultsReported stamps a batch whose results report has been delivered.
func (d *DB) ResultsReported(id uint64) error {
	at := d.now().UTC()
	err := d.update(func(tx kv.Tx) error {
		b, err := getBatch(tx, id)
		if err != nil {
			return err
		}
		b.ResultsReported = at
		return putBatch(tx, b)
	})
	if err != nil {
		return fmt.Errorf("stamp results of batch %d: %w", id, err)
	}
	return nil
}

// Rows calls fn for each row of a batch in line order, until fn returns
// false or an error.
func (d *DB) Rows(batch uint64, fn func(*payment.Row) (bool, error)) error {
	return paymentRows.batchRows(d, batch, fn)
}

// OpenRows calls fn for each row without a check, in batch and line order,
// skipping batches that are not Ready.
func (d *DB) OpenRows(fn func(*payment.Row) (bool, error)) error { return paymentRows.openRows(d, fn) }

// TrackedRows calls fn for each submitted row whose check is not final, in
// batch and line order.
func (d *DB) TrackedRows(fn func(*payment.Row) (bool, error)) error {
	return paymentRows.trackedRows(d, fn)
}

// scanIndex walks an index bucket and yields the rows it names, of Ready
// batches only, each chunk's rows read together by get (getMany).
func scanIndex[R any](d *DB, index []byte, get func(kv.Tx, []payment.RowKey) ([]*R, error), fn func(*R) (bool, error)) error {
	ready := map[uint64]bool{}
	return scan(d, index, nil, func(tx kv.Tx, ks, _ [][]byte) ([]*R, error) {
		keys := make([]payment.RowKey, 0, len(ks))
		for _, k := range ks {
			key := keyFrom(k)
			ok, seen := ready[key.Batch]
			if !seen {
				b, err := getBatch(tx, key.Batch)
				if err != nil {
					return nil, err
				}
				ok = b.Status == payment.BatchReady
				ready[key.Batch] = ok
			}
			if ok {
				keys = append(keys, key)
			}
		}
		return get(tx, keys)
	}, fn)
}

// scan walks a bucket from prefix in chunks. Each chunk is read in its own
// short read transaction and handed to fn only after that transaction has
// ended. fn may therefore write, or wait for a writer: bbolt cannot grow
// its memory map while any read transaction is open, so calling out from
// inside one would deadlock a writer that needs to grow the file. R is a
// payment.Row or a funding.Row; load turns a chunk's keys and values
// into rows (leaving out those to skip), in that transaction.
func scan[R any](d *DB, bucket, prefix []byte, load func(tx kv.Tx, ks, vs [][]byte) ([]*R, error), fn func(*R) (bool, error)) error {
	const chunk = 1000
	var after []byte
	for {
		var rows []*R
		end := false
		err := d.readRows(chunk, func(tx kv.Tx) error {
			// One seek: to the prefix, or past the last key of the
			// chunk before (a seek is a round trip on PostgreSQL).
			c := tx.Bucket(bucket).Cursor()
			var k, v []byte
			if after == nil {
				k, v = c.Seek(prefix)
			} else if k, v = c.Seek(after); k != nil && string(k) == string(after) {
				k, v = c.Next()
			}
			var ks, vs [][]byte
			for n := 0; k != nil && hasPrefix(k, prefix) && n < chunk; k, v = c.Next() {
				n++
				after = append(after[:0], k...)
				ks, vs = append(ks, k), append(vs, v)
			}
			end = k == nil || !hasPrefix(k, prefix)
			var err error
			rows, err = load(tx, ks, vs)
			return err
		})
		if err != nil {
			return err
		}
		for _, r := range rows {
			more, err := fn(r)
			if err != nil || !more {
				return err
			}
		}
		if end {
			return nil
		}
	}
}
