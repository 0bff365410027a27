package state

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/batchd/batchd/internal/payment"
	boltkv "github.com/batchd/batchd/internal/state/bolt"
	"github.com/batchd/batchd/internal/state/kv"
)

// Check checks the open ledger's invariants, the same ones CheckFile
// checks in a file (rows decode, indexes agree with rows, batch counts
// agree, each check owned by exactly one row, funding rows, events), in
// one read transaction. It is `batchd check` on a ledger that is not a
// file; on a file, CheckLedger also checks the file itself and its
// marker. Faults are in the report; an error means the ledger could not
// be read at all.
func (d *DB) Check() (*Report, error) {
	r := &Report{Path: d.Path(), ByState: map[payment.RowState]int{}}
	err := d.view(func(tx kv.Tx) error {
		return boltkv.Guarded(func() error { return r.invariants(tx) })
	})
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", d.Path(), err)
	}
	if r.Restored, err = d.Restored(); err != nil {
		return nil, fmt.Errorf("check %s: %w", d.Path(), err)
	}
	return r, nil
}

// CopyReport is what CopyTo copied.
type CopyReport struct {
	From, To string
	Buckets  map[string]int // keys per bucket
	Keys     int
}

// copyChunk is how many keys one transaction of CopyTo writes.
const copyChunk = 2000

// CopyTo copies the whole ledger, every bucket with its keys and its
// sequence, into dst, which must hold no ledger yet (no batch, no row,
// no file), and then compares every bucket key by key. The source is read
// in one transaction, so the copy is of one moment; the source is never
// written. The copy keeps the ledger's instance, so the labels of checks
// already made stay this ledger's: the source must not be used again
// after the copy (`batchd migrate-state` says so). It writes through
// dst's unfenced path: no instance leads a ledger being made.
func (d *DB) CopyTo(ctx context.Context, dst kv.Store) (*CopyReport, error) {
	rep := &CopyReport{From: d.Path(), To: dst.Name(), Buckets: map[string]int{}}
	if err := refuseNonEmpty(dst); err != nil {
		return nil, err
	}
	err := d.view(func(src kv.Tx) error {
		names, err := copyOrder(src)
		if err != nil {
			return err
		}
		for _, name := range names {
			n, err := copyBucket(ctx, src.Bucket(name), name, dst)
			rep.Buckets[string(name)] = n
			rep.Keys += n
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("copy %s to %s: %w", d.Path(), dst.Name(), err)
	}
	if err := d.view(func(src kv.Tx) error { return sameStores(src, dst) }); err != nil {
		return rep, fmt.Errorf("copy %s to %s: verify: %w", d.Path(), dst.Name(), err)
	}
	// The copy is not the source's database gone back in time: its first
	// write records its own origin (rewind.go).
	err = dst.UpdateUnfenced(func(tx kv.Tx) error { return tx.Bucket(bucketMeta).Delete(keyOrigin) })
	if err != nil {
		return rep, fmt.Errorf("copy %s to %s: forget the source's origin: %w", d.Path(), dst.Name(), err)
	}
	return rep, nil
}

// copyOrder is the order CopyTo copies src's buckets in: first those
// that feed a typed table, in the projection's order (projection.go:
// batches before their rows, rows before the checks they own), so that
// each chunk a PostgreSQL copy commits meets its tables' foreign keys;
// then the others, by name.
func copyOrder(src kv.Tx) ([][]byte, error) {
	var first, rest [][]byte
	for _, t := range projected {
		if src.Bucket([]byte(t.Bucket)) != nil {
			first = append(first, []byte(t.Bucket))
		}
	}
	err := src.ForEachBucket(func(name []byte) error {
		if !slices.ContainsFunc(projected, func(t kv.Table) bool { return t.Bucket == string(name) }) {
			rest = append(rest, bytes.Clone(name))
		}
		return nil
	})
	return append(first, rest...), err
}

// refuseNonEmpty refuses a destination that already holds a ledger's
// content: a copy over it would mix two ledgers.
func refuseNonEmpty(dst kv.Store) error {
	return dst.View(func(tx kv.Tx) error {
		for _, name := range [][]byte{bucketBatches, bucketRows, bucketFiles, bucketSrcRows} {
			if b := tx.Bucket(name); b != nil && b.KeyN() > 0 {
				return fmt.Errorf("copy to %s: it already holds a ledger (bucket %s has %d keys); copy only into an empty database", dst.Name(), name, b.KeyN())
			}
		}
		return nil
	})
}

// copyBucket writes one bucket's keys into dst in chunks, then its
// sequence.
func copyBucket(ctx context.Context, src kv.Bucket, name []byte, dst kv.Store) (int, error) {
	n := 0
	c := src.Cursor()
	k, v := c.First()
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		err := dst.UpdateUnfenced(func(tx kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists(name)
			if err != nil {
				return err
			}
			for i := 0; k != nil && i < copyChunk; i++ {
				if err := b.Put(bytes.Clone(k), bytes.Clone(v)); err != nil {
					return fmt.Errorf("bucket %s: %w", name, err)
				}
				n++
				k, v = c.Next()
			}
			if k == nil {
				return b.SetSequence(src.Sequence())
			}
			return nil
		})
		if err != nil || k == nil {
			return n, err
		}
	}
}

// sameStores compares every bucket of src with dst's, key by key, value
// by value, and each sequence.
func sameStores(src kv.Tx, dst kv.Store) error {
	return src.ForEachBucket(func(name []byte) error {
		sb := src.Bucket(name)
		return dst.View(func(tx kv.Tx) error {
			db := tx.Bucket(name)
			if db == nil {
				return fmt.Errorf("bucket %s is missing from the copy", name)
			}
			if sb.Sequence() != db.Sequence() {
				return fmt.Errorf("bucket %s: sequence %d, copy %d", name, sb.Sequence(), db.Sequence())
			}
			a, b := sb.Cursor(), db.Cursor()
			ka, va := a.First()
			kb, vb := b.First()
			for ka != nil || kb != nil {
				if !bytes.Equal(ka, kb) || !bytes.Equal(va, vb) {
					return fmt.Errorf("bucket %s differs at key %x (copy has %x)", name, ka, kb)
				}
				ka, va = a.Next()
				kb, vb = b.Next()
			}
			return nil
		})
	})
}
