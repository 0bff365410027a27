package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/batchd/batchd/internal/state/kv"
)

// The write lock covers writes, not the network. An optimistic
// transaction (Batch) reads without the lock, from the database or the
// value cache, and records what it read (readSet); its commit is one
// pipelined batch: the write lock, the lease check when fenced, the check
// that every key and page it read still holds what it read (kv_expect,
// kv_expect_page), its writes, COMMIT. Every write transaction of the
// ledger, in any process, takes the lock before it writes, so when the
// checks pass under the lock the transaction's reads are the database as
// it commits: the same outcome as a transaction that held the lock from
// its first read, as kv requires. When a check fails, the server skips
// the rest of the batch, COMMIT included; nothing is written and the
// transaction runs again, locked (Store.run), so it cannot fail twice.
//
// What an optimistic transaction cannot check cheaply (a bucket's
// sequence or key count, the catalogue of buckets, a declared prune)
// takes the lock first (lock), checking what was read until then, and
// the transaction goes on locked.

// readSet is what an optimistic transaction read from the database or
// the cache, in the form the checks compare.
type readSet struct {
	buckets, keys, vals [][]byte // one key each; a nil value: absent
	seen                map[string]bool
	pages               []pageRead
	noBuckets           [][]byte   // buckets read absent
	origin              *kv.Origin // the origin taken from the process
}

// pageRead is a cursor's page as read: the keys at or after (inclusive)
// or after from, at most limit of them.
type pageRead struct {
	bucket, from []byte
	inclusive    bool
	limit        int
	keys, vals   [][]byte
}

// get records that key read as v, once: a later read of it is compared
// with the database at the commit in any case.
func (r *readSet) get(bucket, key, v []byte) {
	w := wkey(bucket, key)
	if r.seen[w] {
		return
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[w] = true
	r.buckets = append(r.buckets, bucket)
	r.keys = append(r.keys, clone(key))
	r.vals = append(r.vals, v)
}

// noBucket records that a bucket was read absent.
func (r *readSet) noBucket(name []byte) {
	r.noBuckets = append(r.noBuckets, clone(name))
}

// queue adds the checks of what was read to b; it returns how many.
func (r *readSet) queue(b *pgx.Batch) int {
	n := 0
	if o := r.origin; o != nil {
		b.Queue("SELECT kv_expect_origin($1, $2, $3)", int64(o.System), int64(o.Timeline), int64(o.Database))
		n++
	}
	if len(r.noBuckets) > 0 {
		b.Queue("SELECT kv_expect_no_bucket($1)", r.noBuckets)
		n++
	}
	if len(r.keys) > 0 {
		b.Queue("SELECT kv_expect($1, $2, $3)", r.buckets, r.keys, r.vals)
		n++
	}
	for _, p := range r.pages {
		b.Queue("SELECT kv_expect_page($1, $2, $3, $4, $5, $6)", p.bucket, p.from, p.inclusive, p.limit, p.keys, p.vals)
		n++
	}
	return n
}

// execExpects reads n checks' results: a changed key is errConflict.
func (t *tx) execExpects(res pgx.BatchResults, n int) error {
	for range n {
		if _, err := res.Exec(); err != nil {
			if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == codeConflict {
				return t.failWith(fmt.Errorf("%s: %w", t.s.Name(), errConflict))
			}
			return t.failWith(fmt.Errorf("%s: check the keys read: %w", t.s.Name(), err))
		}
	}
	return nil
}

// queueLock adds the write lock, the lease check and the read checks of
// an optimistic transaction to b; it returns how many read checks.
func (t *tx) queueLock(b *pgx.Batch) int {
	b.Queue(lockSQL, t.s.lockKey)
	if t.fenced {
		b.Queue(fenceSQL, int64(t.held))
	}
	return t.reads.queue(b)
}

// lock turns an optimistic transaction into a locked one: it takes the
// write lock and the lease row, and checks what was read so far, in one
// round trip. A locked transaction's later reads are current, and it
// reads the database, not the cache. It returns the sticky error.
func (t *tx) lock() error {
	if t.mode != optimistic || t.err != nil {
		return t.err
	}
	n := 0
	res, err := t.send(func(b *pgx.Batch) { n = t.queueLock(b) })
	if err != nil {
		return err
	}
	defer res.Close()
	if err := t.execChecks(res, t.fenced); err != nil {
		return err
	}
	if err := t.execExpects(res, n); err != nil {
		return err
	}
	if err := res.Close(); err != nil {
		return t.fail("take the write lock", nil, err)
	}
	t.mode, t.reads = locked, readSet{}
	return nil
}

// commit sends what the transaction has not sent (the lock and checks of
// an optimistic one, its writes) and COMMIT, in one round trip.
func (t *tx) commit() error {
	if err := t.projectUnsent(); err != nil {
		return err
	}
	optimistic, n := t.mode == optimistic, 0
	var ops []statement
	res, err := t.send(func(b *pgx.Batch) {
		if optimistic {
			n = t.queueLock(b)
		}
		ops = t.queueWrites(b)
		b.Queue("COMMIT")
	})
	if err != nil {
		return err
	}
	defer res.Close()
	if optimistic {
		if err := t.execChecks(res, t.fenced); err != nil {
			return err
		}
		if err := t.execExpects(res, n); err != nil {
			return err
		}
	}
	if err := t.execWrites(res, ops); err != nil {
		return err
	}
	tag, err := res.Exec()
	if err == nil {
		err = res.Close()
	}
	if err == nil && tag.String() != "COMMIT" {
		err = fmt.Errorf("the server answered %q", tag)
	}
	if err != nil {
		// The commit may or may not have landed: what the cache holds
		// of the keys written is unknown.
		t.s.cache.clear()
		return t.failWith(fmt.Errorf("%s: commit: %w", t.s.Name(), err))
	}
	t.committed = true
	return nil
}
