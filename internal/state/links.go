package state

import (
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// Payment-link lines (payment.LinkLedger), on the line store (lines.go).
//
//	links  <sha256 hex>/<line, 10 digits> -> payment.Link (JSON)
var linkLines = lineStore[payment.Link]{
	bucket: []byte("links"), noun: "link line",
	key: func(l *payment.Link) payment.LineKey { return l.Key },
	valid: func(l *payment.Link) string {
		if l.Ref == "" {
			return " and its reference"
		}
		return ""
	},
}

// LinkIntent records l as sent unless its line has a record already,
// which it returns with fresh false.
func (d *DB) LinkIntent(l payment.Link) (payment.Link, bool, error) {
	l.Outcome, l.Sent = payment.LinkSent, d.now().UTC()
	return linkLines.intent(d, l)
}

// LinkSettled records what became of a link line; a line created or
// refused keeps that outcome.
func (d *DB) LinkSettled(k payment.LineKey, outcome payment.LinkOutcome, link *payment.PaymentLink, note string) (payment.Link, error) {
	at := d.now().UTC()
	return linkLines.settleOnce(d, k, func(l *payment.Link) bool { return l.Outcome.Settled() }, func(l *payment.Link) {
		l.Outcome, l.Note, l.Settled = outcome, note, at
		if link != nil {
			l.Token, l.URL = link.Token, link.URL
		}
	})
}

// Links lists the recorded lines of the link file whose content hash is
// file (every file's for ""), in file and line order.
func (d *DB) Links(file string) ([]payment.Link, error) { return linkLines.list(d, file) }

// linkInvariants checks the link lines for `batchd check`.
func (r *Report) linkInvariants(tx kv.Tx) { linkLines.invariants(r, tx) }
