package reconcile

import (
	"fmt"
	"maps"
	"slices"

	"github.com/batchd/batchd/internal/payment"
)

// The kinds of exception a payee's bank-account change makes (README
// "Payee bank-detail changes"), listed after the others.
const (
	KindHeld          = "held"           // a row held for a changed account, waiting for batchd release
	KindAccountChange = "account_change" // a row paid to a changed account (warn) whose check is not final
)

const (
	actionHeld = "The payee's bank account differs from the one batchd paid last: confirm it with the payee through a contact you already had " +
		"(not one given with the new details); then release the row with the command in detail, or leave it held."
	actionAccountChange = "This payment went to an account other than the one batchd paid last: confirm it with the payee through a contact you already had; " +
		"if it is not theirs, void the check at the service before it is deposited."
)

// accountChanges adds an exception for every held row and for every row
// paid to a changed account whose check can still be voided; open names
// the batches that hold rows not final. Called by finish, with m.mu held.
func (m *matcher) accountChanges(open map[uint64]bool) error {
	var held []*payment.Row
	err := m.db.OpenRows(func(r *payment.Row) (bool, error) {
		if r.State == payment.Held {
			held = append(held, r)
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("read held rows: %w", err)
	}
	batches := map[uint64]bool{}
	for _, r := range held {
		batches[r.Key.Batch] = true
	}
	for b := range open {
		batches[b] = true
	}
	heldAt := map[payment.RowKey]*payment.Row{}
	for _, r := range held {
		heldAt[r.Key] = r
	}
	for _, b := range slices.Sorted(maps.Keys(batches)) {
		marks, err := m.db.PayeeMarks(b)
		if err != nil {
			return err
		}
		for line, mark := range marks {
			k := payment.RowKey{Batch: b, Line: line}
			if r := heldAt[k]; r != nil {
				m.addHeld(r, &mark)
			} else if mark.Change != nil && mark.Change.Action == "warn" {
				if err := m.accountChange(k, &mark); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// accountChange adds the exception of row k, paid to a changed account
// (mark), when its check can still be voided: submitted and not final.
// The row is read now: only the few rows a warning marks are.
func (m *matcher) accountChange(k payment.RowKey, mark *payment.PayeeMark) error {
	r, err := m.db.Row(k)
	if err != nil {
		return fmt.Errorf("read %s: %w", k, err)
	}
	rec := recordOf(r)
	if r.State != payment.Submitted || r.CheckID == "" || rec.final() {
		return nil
	}
	e := rowException(KindAccountChange, rec, m.files[k.Batch])
	e.detail, e.action = "paid to a changed account: "+mark.Change.Describe(), actionAccountChange
	m.excs[KindAccountChange+":"+k.String()] = e
	return nil
}

// addHeld records the exception of held row r: its error says the change,
// masked, and the command that releases it.
func (m *matcher) addHeld(r *payment.Row, mark *payment.PayeeMark) {
	if mark.Change == nil {
		return
	}
	m.excs[KindHeld+":"+r.Key.String()] = &exception{kind: KindHeld, key: r.Key, hasRow: true, file: m.files[r.Key.Batch],
		label: r.Label, number: r.Number, amount: r.Payment.Amount, status: payment.Status(payment.Held),
		detail: r.Error, action: actionHeld}
}
