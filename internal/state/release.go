package state

import "github.com/batchd/batchd/internal/state/kv"

// releaseEvery is how many rows the ledger reads between two hints to the
// store that the pages read need not stay resident (kv.Tx.Release). A row
// read costs a few pages of a bbolt file (the row, its index entries,
// which lie anywhere in their buckets), and each page faulted in brings
// its neighbours into the process's mapping with it (the kernel's
// fault-around, 64 KB by default, which bbolt's MADV_RANDOM does not
// turn off), so a reconcile's random reads count many times what they
// read. Re-reading a dropped page costs a minor fault from the page cache,
// and a hint one system call. Measured on a 1,000,000-row ledger
// (docs/benchmarks.md): at 4,096 the file's resident pages peaked at some
// 90 MB, at 1,024 at 44 MB, at 256 they stay under a few MB during the
// walk, with no change in the run's time.
const releaseEvery = 256

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
