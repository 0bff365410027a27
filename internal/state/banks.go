package state

import (
	"encoding/json"
	"fmt"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// The bank directory's answers (payment.BankLedger), one record per
// routing number; the bucket is made by the first answer, so that a
// ledger that never asked has none.
//
//	banks  <routing number> -> payment.Bank (JSON)
var bucketBanks = []byte("banks")

// Bank returns what was recorded of routing, or nil when nothing was.
func (d *DB) Bank(routing string) (*payment.Bank, error) {
	var out *payment.Bank
	err := d.view(func(tx kv.Tx) error {
		b := tx.Bucket(bucketBanks)
		if b == nil {
			return nil
		}
		raw := b.Get([]byte(routing))
		if raw == nil {
			return nil
		}
		out = &payment.Bank{}
		return json.Unmarshal(raw, out)
	})
	if err != nil {
		return nil, fmt.Errorf("read the bank of routing number %s: %w", routing, err)
	}
	return out, nil
}

// PutBank records b, replacing what was recorded of its routing number.
func (d *DB) PutBank(bank payment.Bank) error {
	if bank.Routing == "" {
		return fmt.Errorf("record a bank: no routing number")
	}
	raw, err := json.Marshal(bank)
	if err != nil {
		return err
	}
	err = d.update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketBanks)
		if err != nil {
			return err
		}
		return b.Put([]byte(bank.Routing), raw)
	})
	if err != nil {
		return fmt.Errorf("record the bank of routing number %s: %w", bank.Routing, err)
	}
	return nil
}
