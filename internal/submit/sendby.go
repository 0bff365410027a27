package submit

import (
	"context"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/rowrun"
)

// dropReason is the note a row dropped at its send-by deadline carries in
// its history and Error: the one every kind writes (internal/rowrun).
const dropReason = rowrun.DropReason

// clockPoll is how often, at least, a wait of Run reads its clock again.
// The clock is injected (Options.Now) and may move otherwise than the
// wall clock does: a test's clock is driven by the test, a rehearsal's is
// shifted. A wait therefore sleeps in steps no longer than this and ends
// when the injected clock, not a timer, says so.
const clockPoll = 50 * time.Millisecond

// sendByPassed reports whether row's create intent may no longer leave:
// its ledger set a send-by deadline (a ledger shared under a leader lease)
// and batchd's clock is past it. Another instance may have taken the lead
// meanwhile and may look the row up any moment after the deadline (plus
// resolve.DefaultSendMargin); a create sent now could arrive after that
// lookup found nothing, and the row would be paid twice.
func (r *Runner) sendByPassed(row *payment.Row) bool {
	return rowrun.Passed(row.SendBy, r.opts.Now())
}

// dropLate puts a row whose deadline passed before its create left in
// doubt, without sending anything: it is looked up after the deadline and
// the margin, and sent again only if no check is found. The worker moves
// on (nil). When even that write fails (the ledger fenced this instance:
// it lost the lead) the run stops, as for any ledger failure.
func (r *Runner) dropLate(k payment.RowKey, row *payment.Row) error {
	if _, err := r.led.Doubt(k, dropReason); err != nil {
		return r.ledgerFailed(fmt.Errorf("put %s in doubt at its send-by deadline: %w", k, err))
	}
	r.dropped.Add(1)
	if r.opts.OnSendDropped != nil {
		r.opts.OnSendDropped(1)
	}
	r.log.Warn("create not sent: its send-by deadline passed before the request could leave; the row is in doubt and will be looked up after the deadline",
		"row", k.String(), "send_by", row.SendBy.UTC().Format(time.RFC3339Nano), "now", r.opts.Now().UTC().Format(time.RFC3339Nano))
	return nil
}

// waitUntil waits until batchd's clock reads at or later, or ctx ends
// (its error). It reads the injected clock at least every clockPoll.
func (r *Runner) waitUntil(ctx context.Context, at time.Time) error {
	for {
		d := at.Sub(r.opts.Now())
		if d <= 0 {
			return ctx.Err()
		}
		if err := retry.Sleep(ctx, min(d, clockPoll)); err != nil {
			return err
		}
	}
}

// doubtWait is what is left in doubt after resolveDue: rows whose lookup
// is not due yet, the earliest time one falls due, and how many of them
// wait for a send-by deadline (plus the margin) rather than ResolveAfter.
type doubtWait struct {
	next, last time.Time
	rows       int
	sendBy     int
}

// add counts a row not due before at.
func (w *doubtWait) add(at time.Time, bySendBy bool) {
	w.rows++
	if bySendBy {
		w.sendBy++
	}
	if w.next.IsZero() || at.Before(w.next) {
		w.next = at
	}
	if at.After(w.last) {
		w.last = at
	}
}

// stoppedWaiting logs why rows stay in doubt when ctx ended during the
// wait for their lookups.
func (r *Runner) stoppedWaiting(w doubtWait, err error) {
	r.log.Warn("run stopped before rows in doubt could be looked up; they stay in doubt, and a later run looks them up (none is sent before that)",
		"rows", w.rows, "waiting_for_send_by", w.sendBy, "next_due", w.next.UTC().Format(time.RFC3339),
		"last_due", w.last.UTC().Format(time.RFC3339), "err", err)
}
