package resolve

import (
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/rowrun"
)

// DefaultSendMargin is Resolver.SendMargin when it is zero: the row
// engine's (rowrun.DefaultSendMargin says why five seconds).
const DefaultSendMargin = rowrun.DefaultSendMargin

// ReleasableAt is the earliest time, on the resolver's clock, at which a
// lookup that finds no check for row may release it: its send-by deadline
// plus SendMargin. Before then its create may still leave (from this
// instance, or from one that lost the lead and does not know it yet), so a
// lookup's "not found" proves nothing. It is the zero time for a row with
// no deadline (a ledger that fences nothing, bbolt): the row may be
// released whenever a complete lookup finds no check.
func (r *Resolver) ReleasableAt(row *payment.Row) time.Time {
	if row.SendBy.IsZero() {
		return time.Time{}
	}
	m := r.SendMargin
	if m <= 0 {
		m = DefaultSendMargin
	}
	return row.SendBy.Add(m)
}

// mayRelease reports whether row may be released at now: its create can no
// longer leave (ReleasableAt has passed).
func (r *Resolver) mayRelease(row *payment.Row, now time.Time) bool {
	at := r.ReleasableAt(row)
	return at.IsZero() || !now.Before(at)
}
