package postgres

import (
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/batchd/batchd/internal/state/kv"
)

// bucket is one bucket inside one transaction.
type bucket struct {
	t    *tx
	name []byte
	seq  uint64 // kv_buckets.seq as this transaction last read or wrote it
	// seqRead: seq was read or written in this transaction; a bucket the
	// Store knew to exist is made without reading it (Sequence reads it).
	seqRead bool
}

var _ kv.Bucket = (*bucket)(nil)

// Get returns the key's value, a non-nil empty slice for an empty value,
// nil when the key is absent or the transaction has failed. An optimistic
// transaction takes it from the cache when it can, and records what it
// read for its commit to check (commit.go).
func (b *bucket) Get(key []byte) []byte {
	if v, ok := b.known(key); ok {
		return v
	}
	var v []byte
	err := b.t.row("SELECT v FROM kv_keys WHERE bucket = $1 AND k = $2", []any{b.name, key}, &v)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		v = nil
	case err != nil:
		b.t.fail("get from bucket", b.name, err)
		return nil
	default:
		v = nonNil(v)
	}
	return b.read(key, v)
}

// known answers a read without the database when it can: nil once the
// transaction has failed, the transaction's own write of the key, and in
// an optimistic transaction the cache's value (recorded as read) or,
// while misses are deferred, absent (noted as missed).
func (b *bucket) known(key []byte) ([]byte, bool) {
	t := b.t
	if t.err != nil {
		return nil, true
	}
	if w, ok := t.pending.lookup(b.name, key); ok {
		if w.del {
			return nil, true
		}
		return w.v, true
	}
	if t.mode != optimistic {
		return nil, false
	}
	if v, ok := t.s.cache.get(b.name, key); ok {
		t.reads.get(b.name, key, v)
		return v, true
	}
	if t.deferMisses {
		t.missed = append(t.missed, missed{bucket: b.name, k: clone(key)})
		return nil, true
	}
	return nil, false
}

// read takes v, just read from the database, as the key's value: an
// optimistic transaction records it, and a write transaction caches it.
func (b *bucket) read(key, v []byte) []byte {
	t := b.t
	if t.mode == optimistic {
		t.reads.get(b.name, key, v)
	}
	if t.writable {
		t.s.cache.fill(b.name, key, v)
	}
	return v
}

// scanValue scans a (present, value) row: nil when absent, never nil
// when present.
func scanValue(r pgx.CollectableRow) ([]byte, error) {
	var present bool
	var v []byte
	if err := r.Scan(&present, &v); err != nil || !present {
		return nil, err
	}
	return nonNil(v), nil
}

func nonNil(v []byte) []byte {
	if v == nil {
		return []byte{}
	}
	return v
}

// Put sets the key's value. The write is buffered (writes.go) and reaches
// the database with the transaction's next walk, count or commit; a
// refusal there (a check id moved to another row) fails the transaction.
func (b *bucket) Put(key, value []byte) error {
	t := b.t
	if err := t.check(); err != nil {
		return err
	}
	if len(key) == 0 {
		return errNoKey
	}
	t.pending.put(b.name, key, nonNil(value), t.call)
	return nil
}

// Delete removes the key; deleting an absent key is not an error. It is
// buffered as Put is.
func (b *bucket) Delete(key []byte) error {
	t := b.t
	if err := t.check(); err != nil {
		return err
	}
	t.pending.del(b.name, key, t.call)
	return nil
}

func (b *bucket) Cursor() kv.Cursor { return &cursor{b: b} }

// ForEach calls fn for every key in order. Keys are read a page at a
// time, each page in full before fn runs, so fn may query the transaction.
func (b *bucket) ForEach(fn func(k, v []byte) error) error {
	c := &cursor{b: b}
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return b.t.err
}

func (b *bucket) NextSequence() (uint64, error) {
	t := b.t
	if err := t.check(); err != nil {
		return 0, err
	}
	if err := t.lockFirst(); err != nil {
		return 0, err
	}
	var seq int64
	err := t.row("UPDATE kv_buckets SET seq = seq + 1 WHERE name = $1 RETURNING seq", []any{b.name}, &seq)
	if err != nil {
		return 0, t.fail("next sequence of bucket", b.name, err)
	}
	b.seq, b.seqRead = uint64(seq), true
	return b.seq, nil
}

// Sequence is the bucket's sequence, read once per transaction; 0 when
// the transaction has failed.
func (b *bucket) Sequence() uint64 {
	t := b.t
	if b.seqRead || t.err != nil || t.lockFirst() != nil {
		return b.seq
	}
	var seq int64
	if err := t.row("SELECT seq FROM kv_buckets WHERE name = $1", []any{b.name}, &seq); err != nil {
		t.fail("read the sequence of bucket", b.name, err)
		return 0
	}
	b.seq, b.seqRead = uint64(seq), true
	return b.seq
}

func (b *bucket) SetSequence(v uint64) error {
	t := b.t
	if err := t.check(); err != nil {
		return err
	}
	if err := t.lockFirst(); err != nil {
		return err
	}
	if _, err := t.exec("UPDATE kv_buckets SET seq = $2 WHERE name = $1", b.name, int64(v)); err != nil {
		return t.fail("set sequence of bucket", b.name, err)
	}
	b.seq, b.seqRead = v, true
	return nil
}

// KeyN counts the keys; 0 when the transaction has failed.
func (b *bucket) KeyN() int {
	t := b.t
	if t.lockFirst() != nil || t.flush() != nil {
		return 0
	}
	var n int64
	if err := t.row("SELECT count(*) FROM kv_keys WHERE bucket = $1", []any{b.name}, &n); err != nil {
		t.fail("count keys of bucket", b.name, err)
		return 0
	}
	return int(n)
}

// FillPercent is ignored: PostgreSQL stores keys in rows, not pages the
// caller fills.
func (b *bucket) FillPercent(float64) {}

// GetMany is Get of each key, with the keys that neither the
// transaction's writes nor (optimistic) the cache answer read in one
// round trip.
func (b *bucket) GetMany(keys [][]byte) [][]byte {
	t := b.t
	out := make([][]byte, len(keys))
	var ask [][]byte
	var at []int
	for i, k := range keys {
		if v, ok := b.known(k); ok {
			out[i] = v
			continue
		}
		ask, at = append(ask, k), append(at, i)
	}
	if len(ask) == 0 || t.err != nil {
		return out
	}
	vals, err := queryRows(t, `SELECT x.k IS NOT NULL, x.v FROM unnest($2::bytea[]) WITH ORDINALITY AS q(k, i)
		LEFT JOIN kv_keys x ON x.bucket = $1 AND x.k = q.k ORDER BY q.i`, []any{b.name, ask}, scanValue)
	if err == nil && len(vals) != len(ask) {
		err = errors.New("a value missing from the answer")
	}
	if err != nil {
		t.fail("get from bucket", b.name, err)
		return make([][]byte, len(keys))
	}
	for j, v := range vals {
		out[at[j]] = b.read(ask[j], v)
		if !t.writable {
			// Keys read together are what a write reads next (a
			// reconcile page's rows, then its status commit): the
			// cache takes them from a read-only transaction too.
			t.s.cache.fill(b.name, ask[j], out[at[j]])
		}
	}
	return out
}
