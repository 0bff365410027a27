package postgres

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/batchd/batchd/internal/state/kv"
)

// The typed tables (issue 31, docs/ops-sql.md) are written with the keys
// they come from: the last Put of each key into a bucket a table is fed
// by is decoded by the ledger's projection (kv.Projection) just before
// the write is sent (projectUnsent), once, and its row rides in the same
// pipelined batch as the key's write (queueTables), so the tables cost
// no round trip and are never out of step with kv_keys; a constraint a
// row breaks aborts the transaction, keys and all.
//
// A value the projection cannot decode fails the transaction before
// anything is sent, with an error naming the bucket and the key, and
// names the Batch call that wrote it, which then runs alone (batch.go):
// a table never silently misses a record. Deletes need no decoding:
// every table has the record's key (kv_key).
//
// A key or unique constraint a table's row breaks fails its statement,
// which names the Batch call that wrote it, as the owner triggers do. A
// foreign key is deferred to the COMMIT (batchd writes a row and the
// check it owns, or prunes them, in either order), so a broken one fails
// a shared commit for every call in it, each with the same error; that
// is a bug in the ledger's rules, never an outcome of a caller's input,
// and nothing commits.

// NoTables is a projection that feeds no table, for a Store that holds
// no ledger: the kv contract's tests, whose buckets named "rows" or
// "checks" hold no rows or checks. A ledger's Store never takes it (its
// tables would fall behind its keys, which `batchd check` reports).
var NoTables kv.Projection = noTables{}

type noTables struct{}

func (noTables) Tables() []kv.Table { return nil }

func (noTables) Project(bucket, _, _ []byte) ([]any, error) {
	return nil, fmt.Errorf("bucket %q feeds no table", bucket)
}

// projector is a Store's projection, with each table's statements.
type projector struct {
	proj   kv.Projection
	tables map[string]*table // by bucket
	order  []*table          // as the projection declares them
}

// table is one typed table and its statements.
type table struct {
	kv.Table
	upsert, remove string
}

func newProjector(p kv.Projection) *projector {
	if p == nil {
		return nil
	}
	pr := &projector{proj: p, tables: map[string]*table{}}
	for _, tb := range p.Tables() {
		t := &table{Table: tb}
		cols := "kv_key, " + strings.Join(tb.Columns, ", ")
		sets := make([]string, len(tb.Columns))
		for i, c := range tb.Columns {
			sets[i] = c + " = EXCLUDED." + c
		}
		t.upsert = fmt.Sprintf(`INSERT INTO %s (%s) SELECT %s FROM jsonb_populate_recordset(NULL::%s, $1::jsonb)
			ON CONFLICT (kv_key) DO UPDATE SET %s`, tb.Name, cols, cols, tb.Name, strings.Join(sets, ", "))
		t.remove = fmt.Sprintf("DELETE FROM %s WHERE kv_key = ANY($1::bytea[])", tb.Name)
		pr.tables[tb.Bucket] = t
		pr.order = append(pr.order, t)
	}
	return pr
}

// of is the table bucket feeds, or nil.
func (p *projector) of(bucket []byte) *table {
	if p == nil {
		return nil
	}
	return p.tables[string(bucket)]
}

// record is key's row of t as the JSON object jsonb_populate_recordset
// reads: bytea as "\x…" hex, times as RFC 3339 text. It is written by
// hand (appendValue), not by encoding/json's reflection over a map:
// every committed row of a fed bucket is encoded here, on the path of
// the process's one running commit, and reflection took a sixth of a
// busy reconcile's CPU there (docs/benchmarks.md). Column names are SQL
// identifiers, which need no escaping in JSON.
func (t *table) record(key []byte, cols []any) (json.RawMessage, error) {
	if len(cols) != len(t.Columns) {
		return nil, fmt.Errorf("the projection gave %d columns, the table has %d", len(cols), len(t.Columns))
	}
	buf := make([]byte, 0, 32+2*len(key)+24*len(cols))
	buf = append(buf, `{"kv_key":"\\x`...)
	buf = hex.AppendEncode(buf, key)
	buf = append(buf, '"')
	for i, c := range t.Columns {
		buf = append(append(append(buf, ',', '"'), c...), '"', ':')
		var err error
		if buf, err = appendValue(buf, cols[i]); err != nil {
			return nil, fmt.Errorf("column %s: %w", c, err)
		}
	}
	return append(buf, '}'), nil
}

// appendValue appends v as JSON: the kinds a projection gives directly,
// anything else through encoding/json.
func appendValue(buf []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(buf, "null"...), nil
	case string:
		return appendString(buf, v)
	case bool:
		return strconv.AppendBool(buf, v), nil
	case int:
		return strconv.AppendInt(buf, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(buf, v, 10), nil
	case uint32:
		return strconv.AppendUint(buf, uint64(v), 10), nil
	case uint64:
		return strconv.AppendUint(buf, v, 10), nil
	}
	raw, err := json.Marshal(v)
	return append(buf, raw...), err
}

// appendString appends s as a JSON string: as it is when it is printable
// ASCII with nothing to escape (labels, numbers, ids, times), else
// through encoding/json, which escapes it and replaces invalid UTF-8.
func appendString(buf []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			raw, err := json.Marshal(s)
			return append(buf, raw...), err
		}
	}
	return append(append(append(buf, '"'), s...), '"'), nil
}

// jsonArray is the JSON array of rows (each a valid JSON object, from
// record), joined without encoding/json validating each again.
func jsonArray(rows []json.RawMessage) string {
	n := 2
	for _, r := range rows {
		n += len(r) + 1
	}
	buf := make([]byte, 0, n)
	buf = append(buf, '[')
	for i, r := range rows {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, r...)
	}
	return string(append(buf, ']'))
}

// project decodes a Put's value into its table's row; nil when no table
// is fed by the bucket.
func (p *projector) project(bucket, key, value []byte) (json.RawMessage, error) {
	t := p.of(bucket)
	if t == nil {
		return nil, nil
	}
	cols, err := p.proj.Project(bucket, key, value)
	if err == nil {
		var rec json.RawMessage
		if rec, err = t.record(key, cols); err == nil {
			return rec, nil
		}
	}
	return nil, fmt.Errorf("table %s: bucket %q key %s: %w", t.Name, bucket, keyText(key), err)
}

// projectUnsent makes the table rows of the unsent writes that need one:
// each key's last Put into a bucket a table is fed by. It returns the
// transaction's sticky error.
func (t *tx) projectUnsent() error {
	p := t.s.proj
	if p == nil || t.err != nil {
		return t.err
	}
	ops := t.pending.unsent()
	for i := range lastWrites(ops) {
		op := &ops[i]
		if op.del || op.row != nil || p.of(op.bucket) == nil {
			continue
		}
		row, err := p.project(op.bucket, op.k, op.v)
		if err != nil {
			t.failedCall = op.call
			return t.failWith(fmt.Errorf("%s: put: %w", t.s.Name(), err))
		}
		op.row = row
	}
	return nil
}

// lastWrites are the indexes in ops of each key's last write, in order.
func lastWrites(ops []write) map[int]bool {
	last := make(map[string]int, len(ops))
	for i, op := range ops {
		last[wkey(op.bucket, op.k)] = i
	}
	out := make(map[int]bool, len(last))
	for _, i := range last {
		out[i] = true
	}
	return out
}

// keyText shows a key in an error: as text when it is printable, else in
// hex (a row key is binary).
func keyText(k []byte) string {
	for _, c := range k {
		if c < 0x20 || c > 0x7e {
			return "0x" + hex.EncodeToString(k)
		}
	}
	return fmt.Sprintf("%q", k)
}

// tableWrites are one table's deletes and puts of a statement's worth
// of ops.
type tableWrites struct {
	dels, puts []write
}

// queueTables adds the table statements of ops (the kv writes just
// queued; of each key, its last write) to b: per table, one DELETE and
// one upsert over arrays, deletes first, so that a key whose record moved
// to another key frees its primary key first. perWrite queues one
// statement a write instead, in order, so that a refusal names its Batch
// call.
func (p *projector) queueTables(b *pgx.Batch, ops []write, perWrite bool) []statement {
	if p == nil {
		return nil
	}
	last := lastWrites(ops)
	var latest []write
	var out []statement
	for i, op := range ops {
		switch {
		case !last[i]:
		case perWrite:
			out = append(out, p.queueGrouped(b, ops[i:i+1])...)
		default:
			latest = append(latest, op)
		}
	}
	return append(out, p.queueGrouped(b, latest)...)
}

// queueGrouped queues ops (distinct keys) grouped by table.
func (p *projector) queueGrouped(b *pgx.Batch, ops []write) []statement {
	groups := map[*table]*tableWrites{}
	for _, op := range ops {
		t := p.of(op.bucket)
		if t == nil {
			continue
		}
		g := groups[t]
		if g == nil {
			g = &tableWrites{}
			groups[t] = g
		}
		if op.del {
			g.dels = append(g.dels, op)
		} else {
			g.puts = append(g.puts, op)
		}
	}
	var out []statement
	for _, t := range p.order {
		if g := groups[t]; g != nil && len(g.dels) > 0 {
			keys := make([][]byte, len(g.dels))
			for i, op := range g.dels {
				keys[i] = op.k
			}
			b.Queue(t.remove, keys)
			out = append(out, statement{ops: g.dels, bulk: len(g.dels) > 1})
		}
	}
	for _, t := range p.order {
		if g := groups[t]; g != nil && len(g.puts) > 0 {
			rows := make([]json.RawMessage, len(g.puts))
			for i, op := range g.puts {
				rows[i] = op.row
			}
			b.Queue(t.upsert, jsonArray(rows))
			out = append(out, statement{ops: g.puts, bulk: len(g.puts) > 1})
		}
	}
	return out
}
