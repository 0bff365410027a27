package onboard

import (
	"github.com/batchd/batchd/internal/funding"
)

// On a ledger shared under a leader lease, a funding row's send records a
// send-by deadline (funding.Row.SendBy), as a payment row's does: the
// customer's and the source's creates must leave before it, checked at
// the last moment by the row engine's gate (rowrun.Engine.Gate), and a
// new leader looks a row in doubt up only after it plus the margin. A
// leader that lost its lease while paused therefore never creates a
// customer or a source its successor has already looked for.

// dropLate puts a row whose create was kept from leaving in doubt
// (rowrun.Engine.DropLate).
func (r *Runner) dropLate(row *funding.Row) error {
	return r.run.DropLate(row.Key, row.SendBy, func(reason string) error {
		_, err := r.led.DoubtSource(row.Key, reason)
		return err
	})
}
