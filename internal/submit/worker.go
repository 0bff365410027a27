package submit

import (
	"context"
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/inflight"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/rowrun"
)

// sendRow creates the check of one pending row through the engine, which
// retries what the service did not act on. It returns when the row has a
// check, was rejected, fell into doubt, or is left pending (run stopping,
// or attempts used up).
func (r *Runner) sendRow(ctx context.Context, k payment.RowKey) {
	r.eng.Send(ctx, k, func(ctx context.Context, slot *inflight.Slot) (inflight.Outcome, error) {
		return r.attempt(ctx, k, slot)
	})
}

// attempt sends one create of row k under slot, and says what became of
// the request for the in-flight limit.
func (r *Runner) attempt(ctx context.Context, k payment.RowKey, slot *inflight.Slot) (inflight.Outcome, error) {
	row, err := r.led.Send(k)
	if err != nil {
		return inflight.Ignored, r.eng.LedgerFailed(err) // it names the row and the transition
	}
	// The last look at the clock before the request is handed to the
	// client, on every attempt: past the deadline Send recorded, the
	// create is not sent at all (see the package doc).
	if r.eng.Passed(row.SendBy) {
		return inflight.Ignored, r.dropLate(k, row)
	}
	r.attempts.Add(1)
	// The request runs to its end even when the run is stopping: a
	// cancelled create is an ambiguous one, and ambiguity costs a
	// lookup. The client's own timeout bounds it. The gate runs once the
	// rate limiter let the request go: the wait before it is the rate
	// budget's, not the service's latency.
	slot.Queued()
	chk, err := r.svc.CreateCheck(r.eng.Gate(ctx, row.SendBy, slot.Sent), row)
	if err == nil {
		r.brk.success()
		return inflight.Answered, r.recordCreated(ctx, k, chk, "")
	}
	if errors.Is(err, rowrun.ErrSendByPassed) {
		r.attempts.Add(-1) // counted as sent before the call; the gate kept it from leaving
		return inflight.Ignored, r.dropLate(k, row)
	}
	return outcomeOf(err), r.handleFailure(k, err)
}

// dropLate puts a row whose deadline passed before its create left in
// doubt, without sending anything (rowrun.Engine.DropLate).
func (r *Runner) dropLate(k payment.RowKey, row *payment.Row) error {
	return r.eng.DropLate(k, row.SendBy, func(reason string) error {
		_, err := r.led.Doubt(k, reason)
		return err
	})
}

// outcomeOf is what a failed create tells the in-flight limit: a refusal
// is an answer, a request the service did not act on or whose answer was
// lost is a drop, a refused key says nothing of its pace.
func outcomeOf(err error) inflight.Outcome {
	switch payment.FailureOf(err) {
	case payment.FailRefused:
		return inflight.Answered
	case payment.FailKeyRefused:
		return inflight.Ignored
	default:
		return inflight.Dropped
	}
}

// handleFailure records a failed create. It returns nil when the row has
// reached an outcome (rejected, in doubt), a permanent error when the run
// must stop, and a retryable one when the create may be sent again.
func (r *Runner) handleFailure(k payment.RowKey, err error) error {
	r.feedBreaker(err)
	return r.eng.Failed(k, err, "", rowrun.Writes{
		Reject:  func(msg string) error { _, err := r.led.Reject(k, msg); return err },
		Release: func(reason string) error { _, err := r.led.Release(k, reason); return err },
		Doubt:   func(reason string) error { _, err := r.led.Doubt(k, reason); return err },
	}, func() { r.rejected.Add(1) }, func() { r.retried("check.create") })
}

// recordCreated stores the check on the row and voids it at once when its
// risk result is one the configuration refuses.
func (r *Runner) recordCreated(ctx context.Context, k payment.RowKey, chk *payment.Check, note string) error {
	res := payment.ResultOf(chk, note)
	if _, err := r.led.Created(k, res); err != nil {
		return r.eng.LedgerFailed(fmt.Errorf("record check %s of %s: %w", chk.ID, k, err))
	}
	r.addCreated(1)
	if r.void[res.Risk] {
		return r.voidCheck(ctx, k, chk.ID, res.Risk)
	}
	return nil
}

// voidCheck deletes a check whose risk result is refused, and records why,
// with the one void rule (payment.Void): a void whose answer was lost and
// a check found void already are both recorded as batchd's, since batchd
// asked for it. A void not done is retried by the sweep at the end of the
// run, and counted when that fails too; a check that moved on (printed)
// can no longer be voided and is left to reconcile.
func (r *Runner) voidCheck(ctx context.Context, k payment.RowKey, id, risk string) error {
	outcome, _, note, err := payment.Void(context.WithoutCancel(ctx), r.svc, id, true)
	if err != nil {
		r.eng.Undone(err)
		r.log.Warn("void check", "row", k.String(), "check_id", id, "err", err)
		return nil
	}
	if outcome != payment.CancelVoided {
		r.log.Warn("void check: not voided", "row", k.String(), "check_id", id, "outcome", string(outcome), "why", note)
		return nil
	}
	if err := r.led.Voided(k, "risk result "+risk+" is in submit.void_on_risk"); err != nil {
		return r.eng.LedgerFailed(fmt.Errorf("record the void of %s: %w", k, err))
	}
	r.voided.Add(1)
	return nil
}

// sweepVoids voids checks that should have been voided but were not (the
// DELETE failed, the check was found by a lookup, or the process stopped
// in between), and counts those it still cannot void.
func (r *Runner) sweepVoids(ctx context.Context) error {
	if len(r.void) == 0 {
		return nil
	}
	return rowrun.Sweep(ctx, &r.eng.State, "checks to void", r.led.TrackedRows,
		func(row *payment.Row) bool {
			return r.void[row.Risk] && row.CheckStatus == payment.StatusInProcess
		},
		func(row *payment.Row) error {
			before := r.voided.Load()
			if err := r.voidCheck(ctx, row.Key, row.CheckID, row.Risk); err != nil {
				return err
			}
			if r.voided.Load() == before {
				r.voidFailed.Add(1)
			}
			return nil
		})
}
