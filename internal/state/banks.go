package state

import (
	"fmt"

	"github.com/batchd/batchd/internal/payment"
)

// The bank directory's answers (payment.BankLedger), one record per
// routing number (records.go).
//
//	banks  <routing number> -> payment.Bank (JSON)
var bucketBanks = []byte("banks")

// Bank returns what was recorded of routing, or nil when nothing was.
func (d *DB) Bank(routing string) (*payment.Bank, error) {
	var out payment.Bank
	found, err := d.readRecord(bucketBanks, []byte(routing), &out)
	if err != nil {
		return nil, fmt.Errorf("read the bank of routing number %s: %w", routing, err)
	}
	if !found {
		return nil, nil
	}
	return &out, nil
}

// PutBank records b, replacing what was recorded of its routing number.
func (d *DB) PutBank(bank payment.Bank) error {
	if bank.Routing == "" {
		return fmt.Errorf("record a bank: no routing number")
	}
	if err := d.writeRecord(bucketBanks, []byte(bank.Routing), bank); err != nil {
		return fmt.Errorf("record the bank of routing number %s: %w", bank.Routing, err)
	}
	return nil
}
