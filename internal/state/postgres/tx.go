package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/batchd/batchd/internal/state/kv"
)

// Errors of a caller's misuse; they do not poison the transaction.
var (
	errReadOnly       = errors.New("write in a read-only transaction")
	errBucketNotFound = errors.New("bucket not found")
	errNoKey          = errors.New("key required")
	errNoName         = errors.New("bucket name required")
)

// tx is one kv transaction over one pooled connection (conn.go).
type tx struct {
	s        *Store
	conn     *pgxpool.Conn
	pg       *pgx.Conn
	ctx      context.Context
	mode     txMode
	writable bool
	fenced   bool
	held     uint64 // the lease epoch this Store held when the transaction began
	id       int
	// begun: the opening statements were sent; committed: COMMIT was.
	begun, committed bool
	// err is the first database error met; once set, reads answer absent,
	// writes fail and the transaction returns it (kv's sticky errors).
	err      error
	buckets  map[string]*bucket // known buckets; a nil entry: known absent
	onCommit []func()
	origin   kv.Origin // the server's, for a write transaction (Origin)
	// originRead: origin is set.
	originRead bool
	pending    writes  // buffered Puts and Deletes (writes.go)
	reads      readSet // what an optimistic transaction read (commit.go)
	// call is the Batch call running, of calls sharing the transaction;
	// failedCall the one whose write the database refused, or -1
	// (batch.go).
	call, calls, failedCall int
	// deferMisses: a key the cache lacks reads as absent and is noted
	// in missed, for the batcher's first pass (prefetch.go).
	deferMisses bool
	missed      []missed
}

var _ kv.Tx = (*tx)(nil)

// foreignKeyViolation is SQLSTATE 23503: a key written into a bucket
// that kv_buckets does not have.
const foreignKeyViolation = "23503"

// fail records the first database error of the transaction and returns
// the sticky one.
func (t *tx) fail(op string, name []byte, err error) error {
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == foreignKeyViolation {
		t.s.buckets.Clear() // a bucket it knew is gone (a failover lost its creation): read them again
	}
	return t.failWith(fmt.Errorf("%s: %s %q: %w", t.s.Name(), op, name, err))
}

// failWith records err as the transaction's sticky error, unless one is
// recorded already, and returns the sticky one.
func (t *tx) failWith(err error) error {
	if t.err == nil {
		t.err = err
	}
	return t.err
}

// lockFirst takes the write lock in an optimistic transaction before an
// operation whose reads the commit cannot check (commit.go).
func (t *tx) lockFirst() error {
	if t.mode == optimistic {
		return t.lock()
	}
	return t.err
}

// check says whether a write may run: the transaction is writable and
// has met no error.
func (t *tx) check() error {
	if t.err != nil {
		return t.err
	}
	if !t.writable {
		return errReadOnly
	}
	return nil
}

func (t *tx) ID() int            { return t.id }
func (t *tx) Writable() bool     { return t.writable }
func (t *tx) OnCommit(fn func()) { t.onCommit = append(t.onCommit, fn) }

// Origin is the server and database the write transaction runs on: read
// with a locked transaction's opening, on the connection that commits it.
// An optimistic one takes the origin its process last read, and its
// commit checks it (kv_expect_origin), or reads it when there is none.
func (t *tx) Origin() (kv.Origin, error) {
	if !t.writable {
		return kv.Origin{}, errReadOnly
	}
	if t.err != nil || t.originRead {
		return t.origin, t.err
	}
	if o := t.s.origin.Load(); t.mode == optimistic && o != nil {
		t.origin, t.originRead = *o, true
		t.reads.origin = o
		return t.origin, nil
	}
	res, err := t.send(func(b *pgx.Batch) {
		if t.mode == optimistic {
			b.Queue(originSQL)
		}
	})
	if err != nil {
		return kv.Origin{}, err
	}
	if t.mode == optimistic {
		t.scanOrigin(res.QueryRow())
	}
	if err := res.Close(); err != nil {
		return kv.Origin{}, t.fail("read the database's origin", nil, err)
	}
	return t.origin, t.err
}

// Release does nothing: rows come over a connection, not from a mapped file.
func (t *tx) Release() {}

// Bucket returns the named bucket, or nil when it does not exist. Its
// existence and sequence are read once per transaction: a locked
// transaction holds the write lock, a view reads one snapshot, and an
// optimistic one has its commit check a bucket it read absent, and
// reads a sequence only once it holds the lock.
func (t *tx) Bucket(name []byte) kv.Bucket {
	if b := t.bucket(name); b != nil {
		return b
	}
	return nil
}

func (t *tx) bucket(name []byte) *bucket {
	if t.err != nil {
		return nil
	}
	if b, ok := t.buckets[string(name)]; ok {
		return b
	}
	if _, ok := t.s.buckets.Load(string(name)); ok {
		b := &bucket{t: t, name: append([]byte(nil), name...)} // its sequence is read when asked for
		t.buckets[string(name)] = b
		return b
	}
	// An optimistic transaction takes a bucket's absence from the cache
	// when it can, and has its commit check it (commit.go).
	if t.mode == optimistic && t.s.cache.noBucket(name) {
		t.reads.noBucket(name)
		t.buckets[string(name)] = nil
		return nil
	}
	var seq int64
	err := t.row("SELECT seq FROM kv_buckets WHERE name = $1", []any{name}, &seq)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		t.buckets[string(name)] = nil
		if t.mode == optimistic {
			t.reads.noBucket(name)
		}
		if t.writable {
			t.s.cache.absent(name)
		}
		return nil
	case err != nil:
		t.fail("read bucket", name, err)
		return nil
	}
	// An optimistic transaction reads the sequence again, locked, when
	// asked for it.
	b := &bucket{t: t, name: append([]byte(nil), name...), seq: uint64(seq), seqRead: t.mode != optimistic}
	t.buckets[string(name)] = b
	// A write transaction may have made it: known once committed.
	known := func() {
		t.s.buckets.Store(string(b.name), struct{}{})
		t.s.cache.made(b.name)
	}
	if t.writable {
		t.OnCommit(known)
	} else {
		known()
	}
	return b
}

func (t *tx) CreateBucketIfNotExists(name []byte) (kv.Bucket, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if len(name) == 0 {
		return nil, errNoName
	}
	if b := t.bucket(name); b != nil {
		return b, nil
	}
	if err := t.lockFirst(); err != nil {
		return nil, err
	}
	if _, err := t.exec("INSERT INTO kv_buckets (name) VALUES ($1) ON CONFLICT DO NOTHING", name); err != nil {
		return nil, t.fail("create bucket", name, err)
	}
	delete(t.buckets, string(name))
	if b := t.bucket(name); b != nil {
		return b, nil
	}
	if t.err != nil {
		return nil, t.err
	}
	return nil, t.fail("create bucket", name, errors.New("not found after insert"))
}

// DeleteBucket removes the bucket and its keys.
func (t *tx) DeleteBucket(name []byte) error {
	if err := t.check(); err != nil {
		return err
	}
	if err := t.lockFirst(); err != nil {
		return err
	}
	if err := t.flush(); err != nil {
		return err
	}
	tag, err := t.exec("DELETE FROM kv_buckets WHERE name = $1", name)
	if err != nil {
		return t.fail("delete bucket", name, err)
	}
	if tb := t.s.proj.of(name); tb != nil {
		if _, err := t.exec("DELETE FROM " + tb.Name); err != nil {
			return t.fail("delete bucket's table", name, err)
		}
	}
	t.buckets[string(name)] = nil
	t.s.buckets.Delete(string(name))
	t.s.cache.clear() // its keys are gone
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete bucket %q: %w", name, errBucketNotFound)
	}
	return nil
}

// ForEachBucket calls fn with every bucket's name in order; the names are
// all read before fn first runs, so fn may use the transaction.
func (t *tx) ForEachBucket(fn func(name []byte) error) error {
	if t.lockFirst() != nil {
		return t.err
	}
	names, err := queryRows(t, "SELECT name FROM kv_buckets ORDER BY name", nil, pgx.RowTo[[]byte])
	if err != nil {
		return t.fail("list buckets", nil, err)
	}
	for _, n := range names {
		if err := fn(n); err != nil {
			return err
		}
	}
	return nil
}
