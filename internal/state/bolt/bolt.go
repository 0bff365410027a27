// Package bolt is the embedded storage beneath batchd's ledger: the kv
// contract (internal/state/kv) on a bbolt file, and the file's own life:
// opening it only once its header and page tree are proven sound (Open,
// header.go, pages.go), checking it (Inspect), the marker beside it
// (marker.go), snapshots while a process holds it (snapshot.go), and
// compaction (compact.go). The ledger's rules, which ledger may be used
// among them, are in internal/state, over the kv contract.
package bolt

import (
	"errors"
	"github.com/batchd/batchd/internal/state/kv"
	bbolt "go.etcd.io/bbolt"
)

// Store is a kv.Store on an open bbolt database. bbolt has one writer, so
// write transactions are serialised as kv requires, and it never fences:
// the file lock already keeps a second process out.
type Store struct {
	db *bbolt.DB
}

var _ kv.Store = (*Store)(nil)

// New wraps db; closing the Store closes db.
func New(db *bbolt.DB) *Store { return &Store{db: db} }

// DB is the bbolt database, for tests that measure the file itself.
func (s *Store) DB() *bbolt.DB { return s.db }

func (s *Store) View(fn func(kv.Tx) error) error {
	return s.db.View(func(t *bbolt.Tx) error { return fn(tx{t}) })
}

func (s *Store) Update(fn func(kv.Tx) error) error {
	return s.db.Update(func(t *bbolt.Tx) error { return fn(tx{t}) })
}

// Batch is bbolt's group commit.
func (s *Store) Batch(fn func(kv.Tx) error) error {
	return s.db.Batch(func(t *bbolt.Tx) error { return fn(tx{t}) })
}

// UpdateUnfenced is Update: bbolt never fences.
func (s *Store) UpdateUnfenced(fn func(kv.Tx) error) error { return s.Update(fn) }

func (s *Store) Name() string { return s.db.Path() }
func (s *Store) Close() error { return s.db.Close() }

// Tx is t as a kv.Tx, for code that holds a bbolt transaction of its own
// (the read-only check of a ledger file) and runs the ledger's rules in it.
func Tx(t *bbolt.Tx) kv.Tx { return tx{t} }

type tx struct{ t *bbolt.Tx }

func (t tx) Bucket(name []byte) kv.Bucket {
	b := t.t.Bucket(name)
	if b == nil {
		return nil // a nil *bbolt.Bucket must not become a non-nil kv.Bucket
	}
	return bucket{b}
}

func (t tx) CreateBucketIfNotExists(name []byte) (kv.Bucket, error) {
	b, err := t.t.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, err
	}
	return bucket{b}, nil
}

func (t tx) DeleteBucket(name []byte) error { return t.t.DeleteBucket(name) }

// DeclarePrune does nothing in a write transaction: a bbolt file has one
// writer, batchd, whose rules (internal/state index and indexSource)
// already refuse a check or funding-source id taken by another row; the
// database-side guard the declaration lifts exists only on PostgreSQL,
// where other code may write the tables. It fails in a read transaction,
// as kv requires.
func (t tx) DeclarePrune() error {
	if !t.t.Writable() {
		return bbolt.ErrTxNotWritable
	}
	return nil
}

func (t tx) ForEachBucket(fn func(name []byte) error) error {
	return t.t.ForEach(func(name []byte, _ *bbolt.Bucket) error { return fn(name) })
}

func (t tx) OnCommit(fn func()) { t.t.OnCommit(fn) }
func (t tx) ID() int            { return t.t.ID() }
func (t tx) Writable() bool     { return t.t.Writable() }

// Origin is the zero Origin: a file has no server. An older copy of the
// file put in its place is refused when the ledger is opened, by the
// state directory's marker (internal/state's open.go).
func (t tx) Origin() (kv.Origin, error) {
	if !t.t.Writable() {
		return kv.Origin{}, errors.New("origin: read in a read-only transaction")
	}
	return kv.Origin{}, nil
}

// Release drops the resident pages of bbolt's memory map (see release).
// Only in a read transaction: it holds bbolt's mmap read lock, so the
// mapping cannot be replaced (a remap could reuse the address range)
// while the hint runs. A write transaction takes no such lock, and its
// commit may remap, so there it does nothing.
func (t tx) Release() {
	if t.t.Writable() {
		return
	}
	release(t.t.DB().Info().Data, t.t.Size())
}

type bucket struct{ b *bbolt.Bucket }

// Get answers a present key with a non-nil slice even when its value is
// empty, as kv requires (bbolt itself may answer nil for an empty value).
func (b bucket) Get(key []byte) []byte {
	if v := b.b.Get(key); v != nil {
		return v
	}
	k, v := b.b.Cursor().Seek(key)
	if k == nil || string(k) != string(key) {
		return nil
	}
	if v == nil {
		return []byte{}
	}
	return v
}

// GetMany is Get of each key: a file has no round trips to save.
func (b bucket) GetMany(keys [][]byte) [][]byte {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = b.Get(k)
	}
	return out
}

func (b bucket) Put(key, value []byte) error { return b.b.Put(key, value) }
func (b bucket) Delete(key []byte) error     { return b.b.Delete(key) }
func (b bucket) Cursor() kv.Cursor           { return cursor{b.b.Cursor()} }
func (b bucket) ForEach(fn func(k, v []byte) error) error {
	return b.b.ForEach(func(k, v []byte) error {
		if v == nil {
			v = []byte{}
		}
		return fn(k, v)
	})
}
func (b bucket) NextSequence() (uint64, error) { return b.b.NextSequence() }
func (b bucket) Sequence() uint64              { return b.b.Sequence() }
func (b bucket) SetSequence(v uint64) error    { return b.b.SetSequence(v) }
func (b bucket) KeyN() int                     { return b.b.Stats().KeyN }
func (b bucket) FillPercent(f float64)         { b.b.FillPercent = f }

type cursor struct{ c *bbolt.Cursor }

func (c cursor) First() ([]byte, []byte)        { return nonNil(c.c.First()) }
func (c cursor) Seek(s []byte) ([]byte, []byte) { return nonNil(c.c.Seek(s)) }
func (c cursor) Next() ([]byte, []byte)         { return nonNil(c.c.Next()) }
func (c cursor) Delete() error                  { return c.c.Delete() }

func nonNil(k, v []byte) ([]byte, []byte) {
	if k != nil && v == nil {
		v = []byte{}
	}
	return k, v
}
