package state

import (
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// Cancel lines (payment.CancelLedger), kept by the bookkeeping of every
// applied kind's lines (lineBook).
//
//	cancels  <sha256 hex>/<line, 10 digits> -> payment.Cancel (JSON)

var bucketCancels = []byte("cancels")

var cancelBook = lineBook[payment.Cancel]{bucket: bucketCancels, what: "cancel",
	key:     func(c *payment.Cancel) payment.CancelKey { return c.Key },
	settled: func(c *payment.Cancel) bool { return c.Outcome.Settled() }}

// CancelIntent records c as sent unless its line has a record already,
// which it returns with fresh false. A line without a file hash, a line
// number or a check id is refused.
func (d *DB) CancelIntent(c payment.Cancel) (payment.Cancel, bool, error) {
	if c.Key.File == "" || c.Key.Line <= 0 || c.CheckID == "" {
		return c, false, fmt.Errorf("record cancel intent: a line needs its file, a line number and a check id (got %q line %d check %q)", c.Key.File, c.Key.Line, c.CheckID)
	}
	return cancelBook.intent(d, c, func(c *payment.Cancel) {
		c.Outcome, c.Sent, c.Settled = payment.CancelSent, d.now().UTC(), time.Time{}
	})
}

// CancelSettled records a line's final outcome. A line settled before
// keeps its first outcome; a line with no intent is refused, since no
// void may be settled that was not first recorded as sent.
func (d *DB) CancelSettled(k payment.CancelKey, outcome payment.CancelOutcome, status payment.Status, note string) (payment.Cancel, error) {
	if !outcome.Settled() {
		return payment.Cancel{}, fmt.Errorf("settle cancel line %d: %q is not a final outcome", k.Line, outcome)
	}
	return cancelBook.settle(d, k, func(c *payment.Cancel) {
		c.Outcome, c.Status, c.Note, c.Settled = outcome, status, note, d.now().UTC()
	})
}

// Cancels lists the recorded lines of the cancel file whose content hash
// is file, in line order.
func (d *DB) Cancels(file string) ([]payment.Cancel, error) { return cancelBook.list(d, file) }

// cancelInvariants checks the cancel lines for `batchd check`: each
// decodes under its own key and names a check.
func (r *Report) cancelInvariants(tx kv.Tx) {
	cancelBook.invariants(r, tx, func(c *payment.Cancel) string {
		if c.CheckID == "" {
			return "names no check"
		}
		return ""
	})
}
