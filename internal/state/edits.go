package state

import (
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// Edit lines (payment.EditLedger), kept as cancel lines are (lineBook),
// and the change an edit makes to its row.
//
//	edits  <sha256 hex>/<line, 10 digits> -> payment.Edit (JSON)

var editLines = payment.LineStore[payment.Edit]{
	Bucket: payment.KindEdits.Lines(), Noun: "edit line",
	Key:   func(e *payment.Edit) payment.LineKey { return e.Key },
	Final: func(e *payment.Edit) bool { return e.Outcome.Settled() },
	// batchd edits only the checks of its own rows, whose values it keeps.
	Valid: func(e *payment.Edit) string {
		if e.CheckID == "" || e.Row == (payment.RowKey{}) {
			return ", a check id and its row"
		}
		return ""
	},
}

// EditIntent records e as sent unless its line has a record already,
// which it returns with fresh false. A line without a file hash, a line
// number, a check id or its row is refused.
func (d *DB) EditIntent(e payment.Edit) (payment.Edit, bool, error) {
	e.Outcome, e.Sent, e.Settled = payment.EditSent, d.now().UTC(), time.Time{}
	return editLines.Intent(d, e)
}

// EditSettled records a line's final outcome. A line settled before
// keeps its first outcome; a line with no intent is refused.
func (d *DB) EditSettled(k payment.EditKey, outcome payment.EditOutcome, status payment.Status, note string) (payment.Edit, error) {
	if !outcome.Settled() {
		return payment.Edit{}, fmt.Errorf("settle edit line %d: %q is not a final outcome", k.Line, outcome)
	}
	at := d.now().UTC()
	return editLines.Settle(d, k, func(e *payment.Edit) {
		e.Outcome, e.Status, e.Note, e.Settled = outcome, status, note, at
	})
}

// Edits lists the recorded lines of the edit file whose content hash is
// file (every file's for ""), in line order.
func (d *DB) Edits(file string) ([]payment.Edit, error) { return editLines.List(d, file) }

// Edited gives row k the values after (its identity moves to after's
// label and number), with a history step noting what changed. A row that
// already shows them (an edit recorded before a crash, settled again) is
// returned as it is, with no second step. Only a submitted row, whose
// check exists, can be edited.
func (d *DB) Edited(k payment.RowKey, after payment.EditFields, note string) (*payment.Row, error) {
	var out *payment.Row
	err := d.update(func(tx kv.Tx) error {
		r, err := paymentRows.get(d.keys, tx, k)
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
