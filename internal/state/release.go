package state

import "github.com/batchd/batchd/internal/state/kv"

// releaseEvery is how many rows the ledger reads between two hints to the
// store that the pages read need not stay resident (kv.Tx.Release). A row
// read costs a few pages of a bbolt file (the row, its index entries,
// which lie anywhere in their buckets), so a reconcile of a million rows
// keeps some megabytes of the file counted in the process's RSS instead
// of the whole file; re-reading a dropped page costs a minor fault from
// the page cache, and a hint costs one system call. (At 4,096 such a run
// still peaked at some 90 MB of the file.)
const releaseEvery = 1024

// readRows runs fn in a read transaction that reads about n rows, and,
// whenever the rows read across all callers pass another releaseEvery,
// gives the store the hint before the transaction ends: it must be given
// inside a read transaction (see kv.Tx.Release).
func (d *DB) readRows(n int, fn func(kv.Tx) error) error {
	return d.view(func(tx kv.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if after := d.rowsRead.Add(int64(n)); after/releaseEvery != (after-int64(n))/releaseEvery {
			tx.Release()
		}
		return nil
	})
}
