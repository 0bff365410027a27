package postgres

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// A write transaction buffers its Puts and Deletes and sends them with
// its commit, in the one pipelined batch that takes the write lock
// (commit.go); a transaction that holds the lock already (locked mode)
// sends them earlier when it next walks a bucket or counts one. A Get
// reads the buffer first. A row's transition writes about nine keys: one
// round trip instead of nine is what keeps a PostgreSQL ledger near the
// API's rate when the database is a network hop away
// (docs/benchmarks.md, "Ledger backends").
//
// What the transaction sees is unchanged: its own writes, from the next
// read on. What the database refuses (the owner triggers) fails the
// transaction when the write is sent, and names the Batch call that made
// it (call).

// write is one buffered Put (v) or Delete (del), made by Batch call call.
type write struct {
	bucket, k, v []byte
	del          bool
	call         int
	// row is a Put's row of its bucket's typed table, as JSON, made
	// before the write is sent (project.go); nil until then, and when no
	// table is fed by the bucket.
	row json.RawMessage
}

// writes is a transaction's buffer, in order, with the latest write of
// each key for Get; ops before sent have reached the database.
type writes struct {
	ops    []write
	sent   int
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
func (w *writes) put(bucket, k, v []byte, call int) {
	w.add(write{bucket: bucket, k: clone(k), v: clone(v), call: call})
}

func (w *writes) del(bucket, k []byte, call int) {
	w.add(write{bucket: bucket, k: clone(k), del: true, call: call})
}

func clone(b []byte) []byte { return append([]byte{}, b...) }

// lookup returns the latest write of the key, sent or not, if any.
func (w *writes) lookup(bucket, k []byte) (write, bool) {
	i, ok := w.latest[wkey(bucket, k)]
	if !ok {
		return write{}, false
	}
	return w.ops[i], true
}

// unsent are the writes not yet sent, in order.
func (w *writes) unsent() []write { return w.ops[w.sent:] }

// statement is one queued statement of writes: one write, or many
// together (bulk).
type statement struct {
	ops  []write
	bulk bool
}

// bulkFrom is how many unsent writes are sent as two statements (the
// deletes, the puts, each over arrays) instead of one each: the server's
// time per statement, not the network's, then bounds a busy ledger.
const bulkFrom = 4

// queueWrites adds the unsent writes to b. A shared transaction run
// again after a refused write (calls > 1, locked) sends one statement a
// write, so that the refusal names its call.
func (t *tx) queueWrites(b *pgx.Batch) []statement {
	ops := t.pending.unsent()
	perWrite := t.mode == locked && t.calls > 1
	return append(queueKeys(b, ops, perWrite), t.s.proj.queueTables(b, ops, perWrite)...)
}

// queueKeys adds the writes of ops to kv_keys to b: one statement a write
// when perWrite or when they are few, else two over arrays.
func queueKeys(b *pgx.Batch, ops []write, perWrite bool) []statement {
	if len(ops) < bulkFrom || perWrite {
		out := make([]statement, len(ops))
		for i, op := range ops {
			queueOne(b, op)
			out[i] = statement{ops: ops[i : i+1]}
		}
		return out
	}
	// Only each key's last write counts, so the keys of the two
	// statements are distinct and their order does not matter.
	last := map[string]int{}
	for i, op := range ops {
		last[wkey(op.bucket, op.k)] = i
	}
	var dels, puts statement
	var db, dk, pb, pk, pv [][]byte
	for i, op := range ops {
		switch {
		case last[wkey(op.bucket, op.k)] != i:
		case op.del:
			dels.ops, db, dk = append(dels.ops, op), append(db, op.bucket), append(dk, op.k)
		default:
			puts.ops, pb, pk, pv = append(puts.ops, op), append(pb, op.bucket), append(pk, op.k), append(pv, op.v)
		}
	}
	var out []statement
	if len(dels.ops) > 0 {
		b.Queue(`DELETE FROM kv_keys x USING unnest($1::bytea[], $2::bytea[]) AS d(b, k)
			WHERE x.bucket = d.b AND x.k = d.k`, db, dk)
		out = append(out, statement{ops: dels.ops, bulk: true})
	}
	if len(puts.ops) > 0 {
		b.Queue(`INSERT INTO kv_keys (bucket, k, v) SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[])
			ON CONFLICT (bucket, k) DO UPDATE SET v = EXCLUDED.v WHERE kv_keys.v <> EXCLUDED.v`, pb, pk, pv)
		out = append(out, statement{ops: puts.ops, bulk: true})
	}
	return out
}

func queueOne(b *pgx.Batch, op write) {
	if op.del {
		b.Queue("DELETE FROM kv_keys WHERE bucket = $1 AND k = $2", op.bucket, op.k)
		return
	}
	b.Queue(`INSERT INTO kv_keys (bucket, k, v) VALUES ($1, $2, $3)
		ON CONFLICT (bucket, k) DO UPDATE SET v = EXCLUDED.v WHERE kv_keys.v <> EXCLUDED.v`,
		op.bucket, op.k, op.v)
}

// execWrites reads the results of the queued write statements, failing
// the transaction at the first refused one. A refused write names its
// Batch call (failedCall) when its statement is that call's alone; a bulk
// statement of several calls' writes fails a shared transaction as a
// conflict, to run again locked, a statement a write.
func (t *tx) execWrites(res pgx.BatchResults, sts []statement) error {
	for _, st := range sts {
		if _, err := res.Exec(); err != nil {
			op := st.ops[0]
			what := "put in bucket"
			if op.del {
				what = "delete from bucket"
			}
			if st.bulk && t.calls > 1 && !oneCall(st.ops) {
				return t.failWith(fmt.Errorf("%s: %s %q: %w: %w", t.s.Name(), what, op.bucket, errConflict, err))
			}
			t.failedCall = op.call
			return t.fail(what, op.bucket, err)
		}
	}
	return nil
}

// oneCall reports whether the writes are all one Batch call's.
func oneCall(ops []write) bool {
	for _, op := range ops {
		if op.call != ops[0].call {
			return false
		}
	}
	return true
}

// flush sends the unsent writes in one round trip, in order. Only a
// transaction holding the write lock sends writes before its commit; an
// optimistic one keeps them for the commit's batch. It returns the
// transaction's sticky error.
func (t *tx) flush() error {
	if t.err != nil || t.mode != locked || len(t.pending.unsent()) == 0 {
		return t.err
	}
	if err := t.projectUnsent(); err != nil {
		return err
	}
	var ops []statement
	res, err := t.send(func(b *pgx.Batch) { ops = t.queueWrites(b) })
	if err != nil {
		return err
	}
	defer res.Close()
	if err := t.execWrites(res, ops); err != nil {
		return err
	}
	t.pending.sent = len(t.pending.ops)
	if err := res.Close(); err != nil {
		return t.fail("write buckets", nil, err)
	}
	return nil
}

// inRange returns the latest writes of bucket whose keys lie after from
// (or at it, inclusive) and, when bounded, at or before last, in key
// order: what an optimistic transaction lays over a page it read.
func (w *writes) inRange(bucket, from []byte, inclusive bool, last []byte, bounded bool) []write {
	var out []write
	for _, i := range w.latest {
		op := w.ops[i]
		c := bytes.Compare(op.k, from)
		if !bytes.Equal(op.bucket, bucket) || c < 0 || (c == 0 && !inclusive) || (bounded && bytes.Compare(op.k, last) > 0) {
			continue
		}
		out = append(out, op)
	}
	slices.SortFunc(out, func(a, b write) int { return bytes.Compare(a.k, b.k) })
	return out
}

// overlay lays ws (in key order) over page: a put adds or replaces its
// key, a delete removes it.
func overlay(page []pair, ws []write) []pair {
	if len(ws) == 0 {
		return page
	}
	out := make([]pair, 0, len(page)+len(ws))
	i := 0
	for _, w := range ws {
		for i < len(page) && bytes.Compare(page[i].k, w.k) < 0 {
			out = append(out, page[i])
			i++
		}
		if i < len(page) && bytes.Equal(page[i].k, w.k) {
			i++
		}
		if !w.del {
			out = append(out, pair{k: w.k, v: w.v})
		}
	}
	return append(out, page[i:]...)
}
