package jobs

import (
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// The records of the lines that act on checks (payment.CancelLines,
// payment.EditLines), stamped with the jobs' clock: an intent before its
// request leaves, and a final outcome settled once.

func cancelIntent(db payment.LineLedger, c payment.Cancel, now time.Time) (payment.Cancel, bool, error) {
	c.Outcome, c.Sent, c.Settled = payment.CancelSent, now.UTC(), time.Time{}
	return payment.CancelLines.Intent(db, c)
}

func cancelSettled(db payment.LineLedger, k payment.LineKey, o payment.CancelOutcome, st payment.Status, note string, now time.Time) (payment.Cancel, error) {
	if !o.Settled() {
		return payment.Cancel{}, fmt.Errorf("settle cancel line %d: %q is not a final outcome", k.Line, o)
	}
	return payment.CancelLines.Settle(db, k, func(c *payment.Cancel) { c.Settle(o, st, note, now) })
}

func editIntent(db payment.LineLedger, e payment.Edit, now time.Time) (payment.Edit, bool, error) {
	e.Outcome, e.Sent, e.Settled = payment.EditSent, now.UTC(), time.Time{}
	return payment.EditLines.Intent(db, e)
}

func editSettled(db payment.LineLedger, k payment.LineKey, o payment.EditOutcome, st payment.Status, note string, now time.Time) (payment.Edit, error) {
	if !o.Settled() {
		return payment.Edit{}, fmt.Errorf("settle edit line %d: %q is not a final outcome", k.Line, o)
	}
	return payment.EditLines.Settle(db, k, func(e *payment.Edit) { e.Settle(o, st, note, now) })
}
