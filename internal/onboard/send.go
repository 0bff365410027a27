package onboard

import (
	"context"
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/inflight"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/rowrun"
)

// errSendAgain ends a row's send with the row pending again, to be sent
// in its turn once its customer is known (sendPending sends it back to
// its customer's lane).
var errSendAgain = fmt.Errorf("%w: the row's customer was found by email: sent again in its customer's turn", rowrun.ErrTurnAgain)

// sendRow takes one pending row as far as it goes through the engine: a
// source (or a verification), a rejection, doubt, or pending again when
// the service kept saying "not now" or the run is stopping. A send makes
// one to four requests under its slot (paced).
func (r *Runner) sendRow(ctx context.Context, k payment.RowKey) {
	r.run.Send(ctx, k, func(ctx context.Context, slot *inflight.Slot) (inflight.Outcome, error) {
		p := &paced{slot: slot}
		err := r.attempt(withPace(ctx, p), k)
		return p.outcome(), err
	})
}

// attempt sends a pending row once. It returns nil when the row reached
// an outcome (created, rejected, in doubt), a permanent error when the run
// must stop or the row be left for the next run, and a retryable one when
// the row is pending again and may be sent again.
func (r *Runner) attempt(ctx context.Context, k payment.RowKey) error {
	row, err := r.led.SourceRow(k)
	if err != nil {
		return r.run.LedgerFailed(fmt.Errorf("read %s: %w", k, err))
	}
	if row.State != payment.Pending {
		return nil // settled since it was listed
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
		return nil, r.run.LedgerFailed(fmt.Errorf("mark %s in flight: %w", k, err))
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
	src, err := r.svc.CreateSource(r.run.Gate(ctx, row.SendBy, nil), row.UserID, &row.Request)
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
			return r.run.LedgerFailed(fmt.Errorf("record the rejection of %s: %w", k, err))
		}
		r.run.count(func(s *Summary) { s.Rejected++ })
		return nil
	}
	if err != nil {
		return r.run.LedgerFailed(fmt.Errorf("record funding source %s of %s: %w", res.SourceID, k, err))
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
