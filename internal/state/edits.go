package state

import (
	"fmt"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// The change an edit file's line makes to its row (payment.RowEditor);
// the edit lines themselves are line records (payment.EditLines).

// Edited gives row k the values after (its identity moves to after's
// label and number), with a history step noting what changed. A row that
// already shows them (an edit recorded before a crash, settled again) is
// returned as it is, with no second step. Only a submitted row, whose
// check exists, can be edited.
func (d *DB) Edited(k payment.RowKey, after payment.EditFields, note string) (*payment.Row, error) {
	var out *payment.Row
	err := d.update(func(tx kv.Tx) error {
		r, err := paymentRows.get(d.ring(), tx, k)
		if err != nil {
			return err
		}
		if payment.EditFieldsOf(r) == after {
			out = r
			return nil
		}
		out, err = paymentRows.apply(d, tx, k, payment.Observe, payment.EditedNote+note, func(r *payment.Row) error {
			after.ApplyTo(r)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record edit of %s: %w", k, err)
	}
	return out, nil
}
