package state

import (
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// Cancel lines (payment.CancelLedger), on the line store (lines.go).
//
//	cancels  <sha256 hex>/<line, 10 digits> -> payment.Cancel (JSON)
var cancelLines = payment.LineStore[payment.Cancel]{
	Bucket: payment.KindCancels.Lines(), Noun: "cancel line",
	Key:   func(c *payment.Cancel) payment.LineKey { return c.Key },
	Final: func(c *payment.Cancel) bool { return c.Outcome.Settled() },
	Valid: func(c *payment.Cancel) string {
		if (c.CheckID == "") == (c.Token == "") {
			return " and a check id or a payment link's token (one of them)"
		}
		return ""
	},
}

// CancelIntent records c as sent unless its line has a record already,
// which it returns with fresh false. A line without a file hash, a line
// number, or a check id or link token is refused.
func (d *DB) CancelIntent(c payment.Cancel) (payment.Cancel, bool, error) {
	c.Outcome, c.Sent, c.Settled = payment.CancelSent, d.now().UTC(), time.Time{}
	return cancelLines.Intent(d, c)
}

// CancelSettled records a line's final outcome. A line settled before
// keeps its first outcome; a line with no intent is refused, since no
// void may be settled that was not first recorded as sent.
func (d *DB) CancelSettled(k payment.LineKey, outcome payment.CancelOutcome, status payment.Status, note string) (payment.Cancel, error) {
	if !outcome.Settled() {
		return payment.Cancel{}, fmt.Errorf("settle cancel line %d: %q is not a final outcome", k.Line, outcome)
	}
	at := d.now().UTC()
	return cancelLines.Settle(d, k, func(c *payment.Cancel) {
		c.Outcome, c.Status, c.Note, c.Settled = outcome, status, note, at
	})
}

// Cancels lists the recorded lines of the cancel file whose content hash
// is file, in line order.
func (d *DB) Cancels(file string) ([]payment.Cancel, error) { return cancelLines.List(d, file) }
