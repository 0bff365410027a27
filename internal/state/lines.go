package state

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// Line records. A file whose lines batchd applies one by one with a call
// to the service (cancels, payment links) keeps a record per line, keyed
// by the file's content and the line, written before the line's request
// leaves (its intent) and settled once with the outcome. The rule is one
// for every such kind: lineStore, generic over the record type. Each
// kind's bucket is made by its first intent, so that a ledger that never
// saw such a file has none and its schema stays as it was.
//
//	<bucket>  <sha256 hex>/<line, 10 digits> -> record (JSON)

// lineStore is one kind's line records.
type lineStore[T any] struct {
	bucket []byte
	noun   string                   // "cancel line", for messages and Report faults
	key    func(*T) payment.LineKey // the record's key
	// valid says what is wrong with a record about to be recorded, or "".
	valid func(*T) string
}

func lineKey(k payment.LineKey) []byte {
	return []byte(k.File + "/" + fmt.Sprintf("%010d", k.Line))
}

// intent records rec unless its line has a record already, which it
// returns with fresh false.
func (s lineStore[T]) intent(d *DB, rec T) (T, bool, error) {
	k := s.key(&rec)
	if why := s.valid(&rec); why != "" || k.File == "" || k.Line <= 0 {
		return rec, false, fmt.Errorf("record %s intent: a line needs its file and a line number%s (got %q line %d)", s.noun, why, k.File, k.Line)
	}
	fresh := false
	err := d.update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(s.bucket)
		if err != nil {
			return err
		}
		if raw := b.Get(lineKey(k)); raw != nil {
			return json.Unmarshal(raw, &rec)
		}
		fresh = true
		return s.put(b, &rec)
	})
	if err != nil {
		return rec, false, fmt.Errorf("record %s intent for line %d: %w", s.noun, k.Line, err)
	}
	return rec, fresh, nil
}

// update applies change to line k's record, which must exist (no line is
// settled that was not first recorded); change returns false to leave the
// record as it was (a line settled before keeps its first outcome).
func (s lineStore[T]) update(d *DB, k payment.LineKey, change func(*T) bool) (T, error) {
	var rec T
	err := d.update(func(tx kv.Tx) error {
		b := tx.Bucket(s.bucket)
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
		if !change(&rec) {
			return nil
		}
		return s.put(b, &rec)
	})
	if err != nil {
		return rec, fmt.Errorf("settle %s %d: %w", s.noun, k.Line, err)
	}
	return rec, nil
}

// settleOnce gives line k's record its outcome with set, unless settled
// says the record already has a final one, which it keeps: the one rule
// that a line settles once.
func (s lineStore[T]) settleOnce(d *DB, k payment.LineKey, settled func(*T) bool, set func(*T)) (T, error) {
	return s.update(d, k, func(rec *T) bool {
		if settled(rec) {
			return false
		}
		set(rec)
		return true
	})
}

// list returns the records of the file whose content hash is file (every
// file's when file is ""), in file and line order.
func (s lineStore[T]) list(d *DB, file string) ([]T, error) {
	var out []T
	err := d.view(func(tx kv.Tx) error {
		b := tx.Bucket(s.bucket)
		if b == nil {
			return nil
		}
		var prefix []byte
		if file != "" {
			prefix = []byte(file + "/")
		}
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var rec T
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decode %s %s: %w", s.noun, k, err)
			}
			out = append(out, rec)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the %ss of file %s: %w", s.noun, file, err)
	}
	return out, nil
}

func (s lineStore[T]) put(b kv.Bucket, rec *T) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return b.Put(lineKey(s.key(rec)), raw)
}

// invariants checks the records for `batchd check`: each decodes under
// its own key and is valid.
func (s lineStore[T]) invariants(r *Report, tx kv.Tx) {
	b := tx.Bucket(s.bucket)
	if b == nil {
		return
	}
	_ = b.ForEach(func(k, raw []byte) error {
		where := s.noun + " " + string(k)
		var rec T
		if err := json.Unmarshal(raw, &rec); err != nil {
			r.add(where, "does not decode: %v", err)
			return nil
		}
		if got := s.key(&rec); string(lineKey(got)) != string(k) {
			r.add(where, "is recorded as file %s line %d", got.File, got.Line)
		}
		if why := s.valid(&rec); why != "" {
			r.add(where, "is not valid%s", why)
		}
		return nil
	})
}
