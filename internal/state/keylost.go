package state

import (
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// KeyLostNote is the reason a row rejected by MarkKeyLost carries.
const KeyLostNote = "key lost: the account number cannot be read; send the payment in a file again"

// MarkKeyLost rejects (payment.KeyLost) every row never sent, pending or
// held, payment or funding, whose account number no key of the ring
// opens: its key was lost, and it can never be sent. It returns the rows
// it rejected, by name. A row in flight or in doubt is left to its
// lookup, which needs no account number; once released it is pending,
// and a second MarkKeyLost rejects it. The unreadable value is dropped
// from the row.
func (d *DB) MarkKeyLost() ([]string, error) {
	var names []string
	err := d.update(func(tx kv.Tx) error {
		names = names[:0] // a retried transaction starts over
		if err := markKeyLost(d, tx, paymentRows, &names); err != nil {
			return err
		}
		return markKeyLost(d, tx, sourceRows, &names)
	})
	if err != nil {
		return nil, fmt.Errorf("mark rows whose key is lost: %w", err)
	}
	return names, nil
}

// markKeyLost is MarkKeyLost over one type of row, inside tx.
func markKeyLost[R any](d *DB, tx kv.Tx, t *rowType[R], names *[]string) error {
	keys, err := t.openKeys(tx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		r, err := t.get(nil, tx, k)
		if err != nil {
			return err
		}
		if st := *t.head(r).State; st != payment.Pending && st != payment.Held {
			continue
		}
		acct := t.account(r)
		if _, err := d.ring().Open(*acct, t.aad(k)); !errors.Is(err, acctseal.ErrKeyMissing) && !errors.Is(err, acctseal.ErrDamaged) {
			continue
		}
		*acct = ""
		if _, err := t.applyTo(d, tx, r, payment.KeyLost, KeyLostNote, nil); err != nil {
			return err
		}
		*names = append(*names, t.where+k.String())
	}
	return nil
}
