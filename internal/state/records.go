package state

import (
	"encoding/json"

	"github.com/batchd/batchd/internal/state/kv"
)

// The ledger's small records (the bank directory's answers, account
// tokens) are JSON values in a bucket of their own, made by the first
// write, so that a ledger that never wrote one has no bucket.

// readRecord decodes the record under key of bucket into out, and says
// whether there was one.
func (d *DB) readRecord(bucket, key []byte, out any) (found bool, err error) {
	err = d.view(func(tx kv.Tx) error {
		b := tx.Bucket(bucket)
		if b == nil {
			return nil
		}
		raw := b.Get(key)
		if raw == nil {
			return nil
		}
		found = true
		return json.Unmarshal(raw, out)
	})
	return found, err
}

// writeRecord stores v as the record under key of bucket, replacing what
// was there.
func (d *DB) writeRecord(bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return d.update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucket)
		if err != nil {
			return err
		}
		return b.Put(key, raw)
	})
}
