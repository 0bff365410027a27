package resolve

import (
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// DefaultSendMargin is Resolver.SendMargin when it is zero. A row's
// send-by deadline (payment.Row.SendBy) was set on the clock of the
// instance that recorded the create intent; the instance resolving it
// may be another one, whose clock is somewhat off. Five seconds covers
// the drift of hosts kept by NTP many times over, and the moments a
// request already written at its deadline spends on the wire, while
// costing a new leader only a few seconds before its lookups.
const DefaultSendMargin = 5 * time.Second

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
