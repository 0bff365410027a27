package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// Lines of applied files (cancels, edits): each kind keeps one record per
// line of a file, an intent written before the line's request leaves and
// then its first final outcome. lineBook is that bookkeeping, written
// once for every such kind; a kind names its bucket and how to read its
// record's key and whether it is settled. The bucket is made by the
// first intent, as lost_checks' is: a ledger that never saw such a file
// has none, and the schema stays as it is.
//
//	<bucket>  <sha256 hex>/<line, 10 digits> -> the kind's record (JSON)
type lineBook[T any] struct {
	bucket  []byte
	what    string // "cancel", for messages
	key     func(*T) payment.CancelKey
	settled func(*T) bool
}

// lineKey is a line's key: the file's hash, then the line zero-padded
// so that one file's lines sort together and in order.
func lineKey(k payment.CancelKey) []byte {
	return []byte(k.File + "/" + fmt.Sprintf("%010d", k.Line))
}

// intent records rec, stamped by begin, unless its line has a record
// already, which it returns with fresh false.
func (lb lineBook[T]) intent(d *DB, rec T, begin func(*T)) (T, bool, error) {
	fresh := false
	k := lb.key(&rec)
	err := d.update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(lb.bucket)
		if err != nil {
			return err
		}
		if raw := b.Get(lineKey(k)); raw != nil {
			return json.Unmarshal(raw, &rec)
		}
		fresh = true
		begin(&rec)
		return lb.put(b, &rec)
	})
	if err != nil {
		return rec, false, fmt.Errorf("record %s intent for line %d: %w", lb.what, k.Line, err)
	}
	return rec, fresh, nil
}

// settle gives line k's record its final outcome with finish. A line
// settled before keeps its first outcome; a line with no intent is
// refused, since nothing may be settled that was not first recorded as
// sent.
func (lb lineBook[T]) settle(d *DB, k payment.CancelKey, finish func(*T)) (T, error) {
	var rec T
	err := d.update(func(tx kv.Tx) error {
		b := tx.Bucket(lb.bucket)
		var raw []byte
		if b != nil {
			raw = b.Get(lineKey(k))
		}
		if raw == nil {
			return fmt.Errorf("no intent was recorded for it: %w", payment.ErrNotFound)
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		if lb.settled(&rec) {
			return nil
		}
		finish(&rec)
		return lb.put(b, &rec)
	})
	if err != nil {
		return rec, fmt.Errorf("settle %s line %d: %w", lb.what, k.Line, err)
	}
	return rec, nil
}

// list returns the records of the file whose content hash is file, in
// line order.
func (lb lineBook[T]) list(d *DB, file string) ([]T, error) {
	var out []T
	err := d.view(func(tx kv.Tx) error {
		b := tx.Bucket(lb.bucket)
		if b == nil {
			return nil
		}
		prefix := []byte(file + "/")
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var rec T
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decode %s %s: %w", lb.what, k, err)
			}
			out = append(out, rec)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the %s lines of file %s: %w", lb.what, file, err)
	}
	return out, nil
}

func (lb lineBook[T]) put(b kv.Bucket, rec *T) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return b.Put(lineKey(lb.key(rec)), raw)
}

// invariants checks the lines for `batchd check`: each decodes under its
// own key, and passes the kind's own check (what is wrong, or "").
func (lb lineBook[T]) invariants(r *Report, tx kv.Tx, check func(*T) string) {
	b := tx.Bucket(lb.bucket)
	if b == nil {
		return
	}
	_ = b.ForEach(func(k, raw []byte) error {
		where := lb.what + " " + string(k)
		var rec T
		if err := json.Unmarshal(raw, &rec); err != nil {
			r.add(where, "does not decode: %v", err)
			return nil
		}
		if lk := lb.key(&rec); string(lineKey(lk)) != string(k) {
			r.add(where, "is recorded as file %s line %s", lk.File, strconv.Itoa(lk.Line))
		}
		if why := check(&rec); why != "" {
			r.add(where, "%s", why)
		}
		return nil
	})
}
