package onboard

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/rowrun"
)

// sendVerify completes a micro-deposit verification (a verification
// file's row). The source is read first: wrong-amount tries are bounded
// (three), so a source already verified, by an earlier row or the hosted
// page, is recorded as it is rather than verified a second time, and one
// whose verification has already failed is not tried again.
func (r *Runner) sendVerify(ctx context.Context, row *funding.Row) error {
	k, id := row.Key, row.Request.SourceID
	row, err := r.send(k, nil)
	if err != nil {
		return err
	}
	src, err := r.svc.Source(ctx, id)
	if err != nil {
		step := ""
		if payment.FailureOf(err) == payment.FailRefused {
			step = StepSourceNotFound
		} else if payment.FailureOf(err) == payment.FailLost {
			// A read has no effect: nothing to look up.
			err = fmt.Errorf("%w: %w", payment.ErrNotDone, err)
		}
		return r.failed(k, "read the funding source", err, step)
	}
	switch src.Status {
	case funding.StatusVerified:
		if err := r.sourceCreated(k, funding.ResultOf(src, "already verified at the service; not verified again")); err != nil {
			return err
		}
		r.run.count(func(s *Summary) { s.Verified++ })
		return nil
	case funding.StatusVerificationFailed, funding.StatusDeleted:
		msg := fmt.Sprintf("the funding source is %s at the service", src.Status)
		if _, err := r.led.RejectSource(k, msg, StepVerificationEnded); err != nil {
			return r.run.LedgerFailed(fmt.Errorf("record the rejection of %s: %w", k, err))
		}
		r.run.count(func(s *Summary) { s.Rejected++ })
		return nil
	}
	got, err := r.svc.Verify(context.WithoutCancel(ctx), id, row.Request.Amounts)
	if err != nil {
		return r.failed(k, "verify the micro-deposits", err, r.verifyStep(ctx, id, err))
	}
	// The verify answer names little more than the status: the rest is
	// the source as it was just read.
	res := funding.ResultOf(src, "")
	if got != nil && got.Status != "" {
		res.Status = got.Status
	}
	if err := r.sourceCreated(k, res); err != nil {
		return err
	}
	r.run.count(func(s *Summary) { s.Verified++ })
	return nil
}

// verifyStep is the next step of a refused verification: amounts to check
// while tries are left, the bank-linking flow once they are used up (the
// source, read again, says which).
func (r *Runner) verifyStep(ctx context.Context, id string, err error) string {
	if payment.FailureOf(err) != payment.FailRefused {
		return ""
	}
	if src, rerr := r.svc.Source(ctx, id); rerr == nil && src.Status == funding.StatusVerificationFailed {
		return StepVerificationEnded
	}
	return StepWrongAmounts
}

// awaitingInitiation reports whether a micro-deposit row has its source
// but neither its micro-deposits nor a reason it cannot have them.
func awaitingInitiation(row *funding.Row) bool {
	return row.Request.Method == funding.MicroDeposits && row.State == payment.Submitted &&
		row.Status == funding.StatusPending && row.Initiated.IsZero() && row.NextStep == ""
}

// initiate sends the micro-deposits of a source just created, or records
// why it cannot: from funding.DeprecationDate the service refuses new
// micro-deposit verifications (410), and the row's next step is the
// bank-linking flow. A deprecation known from the clock costs no request.
//
// An initiation whose answer was lost is not sent again in this run: it
// may have sent the deposits. The row stays without its initiation, and
// the next run sends it (two pairs of cents at worst, where stopping here
// could leave the customer with none).
func (r *Runner) initiate(ctx context.Context, k payment.RowKey, sourceID string) error {
	r.run.tryInit(k)
	if funding.Deprecated(r.opts.Now()) {
		return r.initiated(k, time.Time{}, funding.BankLinkStep)
	}
	err := retry.Do(ctx, r.opts.Retry, func(ctx context.Context) error {
		err := r.svc.InitiateVerification(context.WithoutCancel(ctx), sourceID)
		if err == nil || payment.FailureOf(err) != payment.FailNotDone || r.run.Stopping(ctx) {
			return retry.Permanent(err)
		}
		return retry.After(payment.RetryAfter(err), err)
	})
	switch {
	case err == nil:
		return r.initiated(k, r.opts.Now(), "")
	case errors.Is(err, funding.ErrDeprecated):
		return r.initiated(k, time.Time{}, funding.BankLinkStep)
	case payment.FailureOf(err) == payment.FailKeyRefused:
		return r.run.Stop(fmt.Errorf("%w: %w", payment.ErrKeyRefused, err))
	case payment.FailureOf(err) == payment.FailRefused:
		return r.initiated(k, time.Time{}, "micro-deposits could not be sent ("+payment.ServiceMessage(err)+"): "+funding.BankLinkStep)
	}
	r.run.Undone(fmt.Errorf("initiate micro-deposit verification of %s: %w", k, err))
	r.log.Warn("micro-deposit verification not initiated; the next run tries again", "row", k.String(), "err", err)
	return nil
}

// initiated records an initiation, or why there is none.
func (r *Runner) initiated(k payment.RowKey, at time.Time, nextStep string) error {
	if _, err := r.led.Initiated(k, at, nextStep); err != nil {
		return r.run.LedgerFailed(fmt.Errorf("record the micro-deposit initiation of %s: %w", k, err))
	}
	if nextStep == "" {
		r.run.count(func(s *Summary) { s.Initiated++ })
	} else {
		r.run.count(func(s *Summary) { s.BankLink++ })
	}
	return nil
}

// initiateLeft initiates the micro-deposits of rows that have a source but
// none yet: a source found after a lost answer, an initiation the service
// did not take, or a process that stopped in between.
func (r *Runner) initiateLeft(ctx context.Context) error {
	return rowrun.Sweep(ctx, &r.run.State, "micro-deposit rows to initiate", r.led.TrackedSourceRows,
		func(row *funding.Row) bool { return awaitingInitiation(row) && !r.run.initWasTried(row.Key) },
		func(row *funding.Row) error { return r.initiate(ctx, row.Key, row.SourceID) })
}
