package onboard

import (
	"context"
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/rowrun"
)

// errGaveUp stops a row's sends for this run.
var errGaveUp = errors.New("gave up on the row for this run")

// errSendAgain ends a row's send with the row pending again, to be sent
// in its turn once its customer is known (sendPending sends it back to
// its customer's lane).
var errSendAgain = errors.New("the row's customer was found by email: sent again in its customer's turn")

// sendRow takes one pending row as far as it goes: a source (or a
// verification), a rejection, doubt, or pending again when the service
// kept saying "not now" or the run is stopping.
func (r *Runner) sendRow(ctx context.Context, k payment.RowKey) {
	err := retry.Do(ctx, r.opts.Retry, func(ctx context.Context) error {
		if r.stopping(ctx) {
			return retry.Permanent(context.Canceled) // a stop: no new request starts
		}
		// A slot of the in-flight limit first, as submit takes one: a row
		// waiting its turn stays pending, so that only what the rate
		// budget needs is in flight (and in doubt after a crash).
		slot, err := r.limit.Acquire(ctx)
		if err != nil {
			return retry.Permanent(context.Canceled) // a stop while waiting
		}
		p := &paced{slot: slot}
		defer func() { slot.Release(p.outcome()) }()
		if r.stopping(ctx) {
			// The run halted (a refused key, a ledger failure) while
			// this row waited for its slot: nothing more leaves.
			return retry.Permanent(context.Canceled)
		}
		return r.attempt(withPace(ctx, p), k)
	})
	if err != nil && !errors.Is(err, errSendAgain) && !r.stopping(ctx) {
		r.giveUp(k, err)
	}
}

// attempt sends a pending row once. It returns nil when the row reached
// an outcome (created, rejected, in doubt), a permanent error when the run
// must stop or the row be left for the next run, and a retryable one when
// the row is pending again and may be sent again.
func (r *Runner) attempt(ctx context.Context, k payment.RowKey) error {
	row, err := r.led.SourceRow(k)
	if err != nil {
		return r.ledgerFailed(fmt.Errorf("read %s: %w", k, err))
	}
	if row.State != payment.Pending {
		return nil // settled since it was listed
	}
	if n := r.run.Try(k); n > r.opts.Retry.MaxAttempts {
		return retry.Permanent(fmt.Errorf("%w: %d sends", errGaveUp, n-1))
	}
	if row.Request.Method == funding.Verify {
		return r.sendVerify(ctx, row)
	}
	user, how := userOf(row), noteRequestUser
	if user == "" {
		if id, ok := r.run.customer(funding.EmailKey(row.Request.Customer.Email)); ok {
			user, how = id, noteSameEmail
		}
	}
	// A processor token names no account batchd could recognise its
	// source by: the customer's sources just before the token leaves are
	// what tells this row's source from the others after a lost answer.
	var before []string
	if row.Request.Method == funding.Processor && user != "" {
		srcs, err := r.svc.Sources(ctx, user)
		if err != nil {
			return r.readFailed(k, "list the customer's funding sources", err)
		}
		before = make([]string, 0, len(srcs))
		for _, s := range srcs {
			before = append(before, s.ID)
		}
	}
	row, err = r.send(k, before)
	if err != nil {
		return err
	}
	if row.UserID == "" {
		if user == "" {
			return r.newCustomer(ctx, row)
		}
		if row, err = r.customerFound(k, user, how); err != nil {
			return err
		}
	}
	return r.createSource(ctx, row)
}

// send marks a pending row in flight: from here on, a request of it may
// have left.
func (r *Runner) send(k payment.RowKey, before []string) (*funding.Row, error) {
	row, err := r.led.SendSource(k, before)
	if err != nil {
		return nil, r.ledgerFailed(fmt.Errorf("mark %s in flight: %w", k, err))
	}
	r.run.count(func(s *Summary) { s.Attempts++ })
	return row, nil
}

// createSource creates the row's funding source for its recorded customer
// and records it; a MicroDeposits source is then sent its micro-deposits.
func (r *Runner) createSource(ctx context.Context, row *funding.Row) error {
	// The request runs to its end even when the run is stopping: a
	// cancelled create is an ambiguous one, and ambiguity costs a lookup.
	// The client's own timeout bounds it.
	src, err := r.svc.CreateSource(r.gated(ctx, row), row.UserID, &row.Request)
	if errors.Is(err, rowrun.ErrSendByPassed) {
		return r.dropLate(row)
	}
	if err != nil {
		return r.failed(row.Key, "create the funding source", err, nextStepFor(err))
	}
	res := funding.ResultOf(src, "")
	if row.Request.Method == funding.OnDemand && src.Status == funding.StatusUnverified {
		res.NextStep = StepUnverified
	}
	if err := r.sourceCreated(row.Key, res); err != nil {
		return err
	}
	r.run.count(func(s *Summary) { s.Created++ })
	if row.Request.Method == funding.MicroDeposits && src.Status == funding.StatusPending {
		return r.initiate(ctx, row.Key, src.ID)
	}
	return nil
}

// sourceCreated records a row's source. A source another row already
// owns is the service answering with an account linked before: the row
// is rejected rather than given someone else's source.
func (r *Runner) sourceCreated(k payment.RowKey, res funding.Result) error {
	_, err := r.led.SourceCreated(k, res)
	if errors.Is(err, payment.ErrCheckOwned) {
		msg := fmt.Sprintf("the service answered with funding source %s, which another row already holds", res.SourceID)
		if _, err := r.led.RejectSource(k, msg, StepAlreadyLinked); err != nil {
			return r.ledgerFailed(fmt.Errorf("record the rejection of %s: %w", k, err))
		}
		r.run.count(func(s *Summary) { s.Rejected++ })
		return nil
	}
	if err != nil {
		return r.ledgerFailed(fmt.Errorf("record funding source %s of %s: %w", res.SourceID, k, err))
	}
	return nil
}

// userOf is the row's customer as far as the ledger knows it: recorded,
// or named by the file.
func userOf(row *funding.Row) string {
	if row.UserID != "" {
		return row.UserID
	}
	return row.Request.UserID
}
