package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// Cancel lines (payment.CancelLedger). The bucket is made by the first
// CancelIntent, as lost_checks' is: a ledger that never saw a cancel file
// has none, and the schema stays as it is.
//
//	cancels  <sha256 hex>/<line, 10 digits> -> payment.Cancel (JSON)

var bucketCancels = []byte("cancels")

// cancelKey is a line's key: the file's hash, then the line zero-padded
// so that one file's lines sort together and in order.
func cancelKey(k payment.CancelKey) []byte {
	return []byte(k.File + "/" + fmt.Sprintf("%010d", k.Line))
}

// CancelIntent records c as sent unless its line has a record already,
// which it returns with fresh false. A line without a file hash, a line
// number or a check id is refused.
func (d *DB) CancelIntent(c payment.Cancel) (payment.Cancel, bool, error) {
	if c.Key.File == "" || c.Key.Line <= 0 || c.CheckID == "" {
		return c, false, fmt.Errorf("record cancel intent: a line needs its file, a line number and a check id (got %q line %d check %q)", c.Key.File, c.Key.Line, c.CheckID)
	}
	fresh := false
	err := d.update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketCancels)
		if err != nil {
			return err
		}
		if raw := b.Get(cancelKey(c.Key)); raw != nil {
			return json.Unmarshal(raw, &c)
		}
		fresh = true
		c.Outcome, c.Sent = payment.CancelSent, d.now().UTC()
		c.Settled = time.Time{}
		return putCancel(b, c)
	})
	if err != nil {
		return c, false, fmt.Errorf("record cancel intent for line %d: %w", c.Key.Line, err)
	}
	return c, fresh, nil
}

// CancelSettled records a line's final outcome. A line settled before
// keeps its first outcome; a line with no intent is refused, since no
// void may be settled that was not first recorded as sent.
func (d *DB) CancelSettled(k payment.CancelKey, outcome payment.CancelOutcome, status payment.Status, note string) (payment.Cancel, error) {
	var c payment.Cancel
	if !outcome.Settled() {
		return c, fmt.Errorf("settle cancel line %d: %q is not a final outcome", k.Line, outcome)
	}
	err := d.update(func(tx kv.Tx) error {
		b := tx.Bucket(bucketCancels)
		var raw []byte
		if b != nil {
			raw = b.Get(cancelKey(k))
		}
		if raw == nil {
			return fmt.Errorf("no intent was recorded for it: %w", payment.ErrNotFound)
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		if c.Outcome.Settled() {
			return nil
		}
		c.Outcome, c.Status, c.Note, c.Settled = outcome, status, note, d.now().UTC()
		return putCancel(b, c)
	})
	if err != nil {
		return c, fmt.Errorf("settle cancel line %d: %w", k.Line, err)
	}
	return c, nil
}

// Cancels lists the recorded lines of the cancel file whose content hash
// is file, in line order.
func (d *DB) Cancels(file string) ([]payment.Cancel, error) {
	var out []payment.Cancel
	err := d.view(func(tx kv.Tx) error {
		b := tx.Bucket(bucketCancels)
		if b == nil {
			return nil
		}
		prefix := []byte(file + "/")
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var rec payment.Cancel
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decode cancel %s: %w", k, err)
			}
			out = append(out, rec)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the cancel lines of file %s: %w", file, err)
	}
	return out, nil
}

func putCancel(b kv.Bucket, c payment.Cancel) error {
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return b.Put(cancelKey(c.Key), raw)
}

// cancelInvariants checks the cancel lines for `batchd check`: each
// decodes under its own key and names a check.
func (r *Report) cancelInvariants(tx kv.Tx) {
	b := tx.Bucket(bucketCancels)
	if b == nil {
		return
	}
	_ = b.ForEach(func(k, raw []byte) error {
		where := "cancel " + string(k)
		var c payment.Cancel
		if err := json.Unmarshal(raw, &c); err != nil {
			r.add(where, "does not decode: %v", err)
			return nil
		}
		if string(cancelKey(c.Key)) != string(k) {
			r.add(where, "is recorded as file %s line %s", c.Key.File, strconv.Itoa(c.Key.Line))
		}
		if c.CheckID == "" {
			r.add(where, "names no check")
		}
		return nil
	})
}
