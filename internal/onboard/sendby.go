package onboard

import (
	"context"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/resolve"
	"github.com/batchd/batchd/internal/rowrun"
)

// On a ledger shared under a leader lease, a funding row's send records a
// send-by deadline (funding.Row.SendBy), as a payment row's does: the
// customer's and the source's creates must leave before it, checked at
// the last moment (internal/sendgate, after the rate limiter), and a new
// leader looks a row in doubt up only after it plus
// resolve.DefaultSendMargin. A leader that lost its lease while paused
// therefore never creates a customer or a source its successor has
// already looked for.

// dropReason is the note of a row whose create was not sent: the one every
// kind writes (internal/rowrun).
const dropReason = rowrun.DropReason

// gated is ctx, not cancelled with the run (a cancelled create is an
// ambiguous one), carrying the row's send-by check for the HTTP layer.
func (r *Runner) gated(ctx context.Context, row *funding.Row) context.Context {
	return rowrun.Gate(ctx, row.SendBy, r.opts.Now, nil)
}

// dropLate puts a row whose create was kept from leaving in doubt: it is
// looked up after its deadline and sent again only if nothing is found.
// When that write fails (the ledger fenced this instance) the run stops.
func (r *Runner) dropLate(row *funding.Row) error {
	if _, err := r.led.DoubtSource(row.Key, dropReason); err != nil {
		return r.ledgerFailed(fmt.Errorf("put %s in doubt at its send-by deadline: %w", row.Key, err))
	}
	r.log.Warn("create not sent: its send-by deadline passed before the request could leave; the row is in doubt and will be looked up after the deadline",
		"row", row.Key.String(), "send_by", row.SendBy.UTC().Format(time.RFC3339Nano))
	return nil
}

// lookupAt is when a row in doubt may be looked up: ResolveAfter after its
// attempt, and not before its send-by deadline plus the margin.
func (r *Runner) lookupAt(row *funding.Row) time.Time {
	at := row.AttemptAt.Add(r.opts.ResolveAfter)
	if !row.SendBy.IsZero() {
		if s := row.SendBy.Add(resolve.DefaultSendMargin); s.After(at) {
			at = s
		}
	}
	return at
}

// inDoubt reports whether row waits for a lookup.
func inDoubt(row *funding.Row) bool { return row.State == payment.InDoubt }
