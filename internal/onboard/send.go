package onboard

import (
	"context"
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
)

// errGaveUp stops a row's sends for this run.
var errGaveUp = errors.New("gave up on the row for this run")

// sendPending sends the pending rows one at a time, in batch and line
// order, and returns how many it sent. A row whose customer (by user_id
// or email) or, for a verification, whose source has another row in doubt
// waits until that row is resolved: a lost answer is told from the
// customer's other sources by what the row alone could have made, which
// holds only while no other row of the customer is unsettled.
func (r *Runner) sendPending(ctx context.Context) (int, error) {
	var pending []*funding.Row
	busy := map[string]bool{}
	// Rows first, sends after: a row is never written while the scan
	// that found it is still reading the ledger.
	err := r.led.OpenSourceRows(func(row *funding.Row) (bool, error) {
		switch {
		case row.State != payment.Pending:
			r.markBusy(busy, row)
		case !r.run.skip[row.Key]:
			pending = append(pending, row)
		}
		return true, nil
	})
	if err != nil {
		return 0, fmt.Errorf("walk pending funding-source rows: %w", err)
	}
	sent := 0
	for _, row := range pending {
		if r.stopping(ctx) {
			break
		}
		if r.waits(busy, row) {
			continue
		}
		r.sendRow(ctx, row.Key)
		sent++
		now, err := r.led.SourceRow(row.Key)
		if err != nil {
			r.ledgerFailed(fmt.Errorf("read %s: %w", row.Key, err))
			break
		}
		if now.State == payment.InDoubt || now.State == payment.InFlight {
			r.markBusy(busy, now)
		}
	}
	if r.run.halted != nil {
		return sent, r.run.halted
	}
	return sent, ctx.Err()
}

// busyKeys are the names under which rows share a customer or a source.
func (r *Runner) busyKeys(row *funding.Row) []string {
	var ks []string
	if u := userOf(row); u != "" {
		ks = append(ks, "user:"+u)
	}
	if e := funding.EmailKey(row.Request.Customer.Email); e != "" {
		ks = append(ks, "email:"+e)
		if u := r.run.customers[e]; u != "" {
			ks = append(ks, "user:"+u)
		}
	}
	if row.Request.Method == funding.Verify && row.Request.SourceID != "" {
		ks = append(ks, "source:"+row.Request.SourceID)
	}
	return ks
}

func (r *Runner) markBusy(busy map[string]bool, row *funding.Row) {
	for _, k := range r.busyKeys(row) {
		busy[k] = true
	}
}

// waits reports whether row shares a customer or a source with a row in
// doubt.
func (r *Runner) waits(busy map[string]bool, row *funding.Row) bool {
	for _, k := range r.busyKeys(row) {
		if busy[k] {
			return true
		}
	}
	return false
}

// sendRow takes one pending row as far as it goes: a source (or a
// verification), a rejection, doubt, or pending again when the service
// kept saying "not now" or the run is stopping.
func (r *Runner) sendRow(ctx context.Context, k payment.RowKey) {
	err := retry.Do(ctx, r.opts.Retry, func(ctx context.Context) error {
		if r.stopping(ctx) {
			return retry.Permanent(context.Canceled) // a stop: no new request starts
		}
		return r.attempt(ctx, k)
	})
	if err != nil && !r.stopping(ctx) {
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
	r.run.tries[k]++
	if n := r.run.tries[k]; n > r.opts.Retry.MaxAttempts {
		return retry.Permanent(fmt.Errorf("%w: %d sends", errGaveUp, n-1))
	}
	if row.Request.Method == funding.Verify {
		return r.sendVerify(ctx, row)
	}
	user, how := userOf(row), noteRequestUser
	if user == "" {
		if id, ok := r.run.customers[funding.EmailKey(row.Request.Customer.Email)]; ok {
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
	r.run.sum.Attempts++
	return row, nil
}

// createSource creates the row's funding source for its recorded customer
// and records it; a MicroDeposits source is then sent its micro-deposits.
func (r *Runner) createSource(ctx context.Context, row *funding.Row) error {
	// The request runs to its end even when the run is stopping: a
	// cancelled create is an ambiguous one, and ambiguity costs a lookup.
	// The client's own timeout bounds it.
	src, err := r.svc.CreateSource(r.gated(ctx, row), row.UserID, &row.Request)
	if errors.Is(err, errSendByPassed) {
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
	r.run.sum.Created++
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
		r.run.sum.Rejected++
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
