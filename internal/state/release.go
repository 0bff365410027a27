package state

import "github.com/batchd/batchd/internal/state/kv"

// releaseEvery is how many rows the ledger reads between two hints to the
// store that the pages read need not stay resident (kv.Tx.Release). A
// row is about a kilobyte of a bbolt file, so a walk over a ledger of a
// million rows keeps a few megabytes of the file counted in the process's
// RSS instead of the whole file; re-reading a dropped page costs a minor
// fault from the page cache, and a hint costs one system call.
const releaseEvery = 4096

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
