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

// How a row's customer became known, as its history says.
const (
	noteRequestUser = "customer named by the file's user_id"
	noteSameEmail   = "customer of an earlier row with the same email"
	noteCreated     = "customer created"
)

// loadCustomers learns the customers rows have recorded, by email: a
// customer is created once per email, whichever file and run its rows
// came in: every funding-source batch's rows are read, settled ones
// included.
func (r *Runner) loadCustomers() error {
	m := map[string]string{}
	add := func(row *funding.Row) (bool, error) {
		if row.UserID != "" && row.Request.UserID == "" && row.Request.Customer.Email != "" {
			if k := funding.EmailKey(row.Request.Customer.Email); m[k] == "" {
				m[k] = row.UserID
			}
		}
		return true, nil
	}
	batches, err := r.led.Batches()
	for i := 0; err == nil && i < len(batches); i++ {
		if batches[i].Kind == payment.KindSources {
			err = r.led.SourceRows(batches[i].ID, add)
		}
	}
	if err != nil {
		return fmt.Errorf("read the customers of funding-source rows: %w", err)
	}
	for e, id := range m {
		r.run.setCustomer(e, id)
	}
	return nil
}

// customerFound records the row's customer before anything is created
// for it, so that a lost answer is looked up under that customer.
func (r *Runner) customerFound(k payment.RowKey, userID, note string) (*funding.Row, error) {
	row, err := r.led.CustomerFound(k, userID, note)
	if err != nil {
		return nil, r.run.LedgerFailed(fmt.Errorf("record the customer of %s: %w", k, err))
	}
	return row, nil
}

// newCustomer creates the customer of a row in flight that names none
// and no earlier row has created, records it at once, and goes on to the
// row's source.
//
// A refused create is most often a customer that already has this email
// (created outside batchd, or by a row since pruned): email is a
// customer's identity, so it is looked for and, when found, used. Such a
// customer may already have sources, and may be the customer of other
// rows (by user_id) of this run, so the row is released and sent again
// as one whose customer is known, in that customer's turn (sendPending):
// a processor row then records the customer's sources before its token
// leaves. A customer created here is new: no other row can name it, it
// has no source yet, and the row goes on in the same send.
func (r *Runner) newCustomer(ctx context.Context, row *funding.Row) error {
	k := row.Key
	id, err := r.svc.CreateCustomer(r.run.Gate(ctx, row.SendBy, nil), row.Request.Customer)
	if errors.Is(err, rowrun.ErrSendByPassed) {
		return r.dropLate(row)
	}
	if err == nil {
		email := funding.EmailKey(row.Request.Customer.Email)
		r.run.setCustomer(email, id)
		r.run.count(func(s *Summary) { s.Customers++ })
		if row, err = r.customerFound(k, id, noteCreated); err != nil {
			return err
		}
		return r.createSource(ctx, row)
	}
	if payment.FailureOf(err) != payment.FailRefused {
		return r.failed(k, "create the customer", err, "")
	}
	found, ferr := r.findCustomer(ctx, row.Request.Customer.Email)
	switch {
	case ferr != nil && payment.FailureOf(ferr) == payment.FailKeyRefused:
		return r.failed(k, "find the customer by email", ferr, "")
	case ferr != nil:
		// Not known whether the customer exists: try again later, as
		// for any request the service did not answer.
		if lerr := r.release(k, "find the customer by email: "+ferr.Error()); lerr != nil {
			return lerr
		}
		return retry.After(payment.RetryAfter(ferr), ferr)
	case found == "":
		return r.failed(k, "create the customer", err, nextStepFor(err))
	}
	r.run.setCustomer(funding.EmailKey(row.Request.Customer.Email), found)
	if lerr := r.release(k, "a customer with this email exists; sending again as that customer's row"); lerr != nil {
		return lerr
	}
	r.log.Info("customer found by email after its create was refused", "row", k.String(), "user_id", found)
	return retry.Permanent(errSendAgain)
}

// findCustomer walks the customer list for email, retrying what may be
// retried; "" when a complete walk found none.
func (r *Runner) findCustomer(ctx context.Context, email string) (string, error) {
	var id string
	err := rowrun.Read(ctx, r.opts.Retry, func(ctx context.Context) error {
		var found bool
		var err error
		id, found, err = r.svc.FindCustomer(ctx, email)
		if !found {
			id = ""
		}
		return err
	})
	return id, err
}
