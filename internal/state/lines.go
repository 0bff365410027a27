package state

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// Line records (payment.LineLedger): the one store of every kind whose
// lines batchd applies one by one (cancels, payment links, edits), each
// record opaque JSON the kind's payment.LineStore reads. A kind's bucket
// is made by its first intent, so that a ledger that never saw such a
// file has none and its schema stays as it was.
//
//	<bucket>  <sha256 hex>/<line, 10 digits> -> record (JSON, with "key")

func lineKey(k payment.LineKey) []byte {
	return []byte(k.File + "/" + fmt.Sprintf("%010d", k.Line))
}

// LineIntent stores rec under k unless the line has a record, which it
// returns with fresh false.
func (d *DB) LineIntent(bucket string, k payment.LineKey, rec []byte) ([]byte, bool, error) {
	stored, fresh := rec, false
	err := d.update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(bucket))
		if err != nil {
			return err
		}
		if raw := b.Get(lineKey(k)); raw != nil {
			stored = bytes.Clone(raw)
			return nil
		}
		fresh = true
		return b.Put(lineKey(k), rec)
	})
	if err != nil {
		return nil, false, fmt.Errorf("record line %d of file %s in %s: %w", k.Line, k.File, bucket, err)
	}
	return stored, fresh, nil
}

// LineUpdate passes line k's record to change and stores what it returns
// when ok, in one transaction.
func (d *DB) LineUpdate(bucket string, k payment.LineKey, change func([]byte) ([]byte, bool, error)) ([]byte, error) {
	var out []byte
	err := d.update(func(tx kv.Tx) error {
		b := tx.Bucket([]byte(bucket))
		var raw []byte
		if b != nil {
			raw = b.Get(lineKey(k))
		}
		if raw == nil {
			return fmt.Errorf("no intent was recorded for it: %w", payment.ErrNotFound)
		}
		out = bytes.Clone(raw)
		next, ok, err := change(out)
		if err != nil || !ok {
			return err
		}
		out = next
		return b.Put(lineKey(k), next)
	})
	if err != nil {
		return nil, fmt.Errorf("update line %d of file %s in %s: %w", k.Line, k.File, bucket, err)
	}
	return out, nil
}

// LineRecords lists the records of the file whose content hash is file
// (every file's for ""), in file and line order.
func (d *DB) LineRecords(bucket, file string) ([][]byte, error) {
	var out [][]byte
	err := d.view(func(tx kv.Tx) error {
		b := tx.Bucket([]byte(bucket))
		if b == nil {
			return nil
		}
		var prefix []byte
		if file != "" {
			prefix = []byte(file + "/")
		}
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			out = append(out, bytes.Clone(v))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the lines of file %s in %s: %w", file, bucket, err)
	}
	return out, nil
}

// lineInvariants checks every kind's line records for `batchd check`:
// each decodes, and names the line it is kept under.
func (r *Report) lineInvariants(tx kv.Tx) {
	for _, k := range payment.Kinds() {
		b := tx.Bucket([]byte(k.Lines))
		if k.Lines == "" || b == nil {
			continue
		}
		_ = b.ForEach(func(key, raw []byte) error {
			where := k.Kind.String() + " line " + string(key)
			var rec struct {
				Key payment.LineKey `json:"key"`
			}
			if err := json.Unmarshal(raw, &rec); err != nil {
				r.add(where, "does not decode: %v", err)
			} else if string(lineKey(rec.Key)) != string(key) {
				r.add(where, "is recorded as file %s line %d", rec.Key.File, rec.Key.Line)
			}
			return nil
		})
	}
}
