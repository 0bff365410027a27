package postgres

import (
	"github.com/jackc/pgx/v5"
)

// A write transaction buffers its Puts and Deletes and sends them in one
// round trip (a pgx batch, pipelined) when it next walks a bucket, counts
// one, deletes one, or commits; a Get reads the buffer first. A row's
// transition writes about nine keys: one round trip instead of nine is
// what keeps a PostgreSQL ledger near the API's rate when the database is
// a network hop away (docs/benchmarks.md, "Ledger backends").
//
// What the transaction sees is unchanged: its own writes, from the next
// read on. What the database refuses (the owner triggers) fails the
// transaction at the flush, as it would have at the write.

// write is one buffered Put (v) or Delete (del).
type write struct {
	bucket, k, v []byte
	del          bool
}

// writes is a transaction's buffer, in order, with the latest write of
// each key for Get.
type writes struct {
	ops    []write
	latest map[string]int // bucket+"\x00"+key → index in ops
}

func wkey(bucket, k []byte) string { return string(bucket) + "\x00" + string(k) }

func (w *writes) add(op write) {
	if w.latest == nil {
		w.latest = map[string]int{}
	}
	w.latest[wkey(op.bucket, op.k)] = len(w.ops)
	w.ops = append(w.ops, op)
}

// put and del copy key and value: a caller may reuse its slices once
// the call returns, as bbolt's callers may.
func (w *writes) put(bucket, k, v []byte) {
	w.add(write{bucket: bucket, k: clone(k), v: clone(v)})
}

func (w *writes) del(bucket, k []byte) {
	w.add(write{bucket: bucket, k: clone(k), del: true})
}

func clone(b []byte) []byte { return append([]byte{}, b...) }

// lookup returns the latest buffered write of the key, if any.
func (w *writes) lookup(bucket, k []byte) (write, bool) {
	i, ok := w.latest[wkey(bucket, k)]
	if !ok {
		return write{}, false
	}
	return w.ops[i], true
}

// flush sends the buffered writes in one round trip, in order, and
// empties the buffer. It returns the transaction's sticky error.
func (t *tx) flush() error {
	if t.err != nil || len(t.pending.ops) == 0 {
		return t.err
	}
	ops := t.pending.ops
	t.pending = writes{}
	var b pgx.Batch
	for _, op := range ops {
		if op.del {
			b.Queue("DELETE FROM kv_keys WHERE bucket = $1 AND k = $2", op.bucket, op.k)
			continue
		}
		b.Queue(`INSERT INTO kv_keys (bucket, k, v) VALUES ($1, $2, $3)
			ON CONFLICT (bucket, k) DO UPDATE SET v = EXCLUDED.v WHERE kv_keys.v <> EXCLUDED.v`,
			op.bucket, op.k, op.v)
	}
	res := t.pg.SendBatch(t.ctx, &b)
	for _, op := range ops {
		if _, err := res.Exec(); err != nil {
			res.Close()
			what := "put in bucket"
			if op.del {
				what = "delete from bucket"
			}
			return t.fail(what, op.bucket, err)
		}
	}
	if err := res.Close(); err != nil {
		return t.fail("write buckets", nil, err)
	}
	return nil
}
