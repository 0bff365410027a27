package onboard

import (
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/rowrun"
)

// Next steps a rejected (or unfinished) row tells the finance team. They
// are what a person does next, in the results report's next_step column.
const (
	StepInvalidToken = "ask the customer to link the account again and send a new processor token issued for processor " +
		funding.ProcessorName
	StepAccountTaken      = "the account belongs to another customer: remove it there (/accounts/delete) or use that customer"
	StepTooManySources    = "the customer has the most bank accounts allowed: remove one (/funding-source/remove) or use another customer"
	StepCustomerNotFound  = "check the user_id: it is no customer of this API key; or leave it empty and give the customer's name and email to create one"
	StepAlreadyLinked     = "the account is already linked: use the funding source already recorded for it"
	StepUnverified        = "credits only: to debit this account, link it with the bank-linking flow (a processor token issued for processor " + funding.ProcessorName + ")"
	StepSendVerification  = "send a verification file with the two micro-deposit amounts on the customer's bank statement (they arrive in 1 to 2 business days)"
	StepWrongAmounts      = "check the two amounts on the customer's bank statement and send them in a new verification file; after 3 wrong tries the account must be linked with the bank-linking flow"
	StepVerificationEnded = "micro-deposit verification failed for good: " + funding.BankLinkStep
	StepSourceNotFound    = "check the funding_source_id: it is no funding source of this API key"
	StepLinkWithProvider  = "have the customer link the account with the bank-linking provider and send a processor token issued for processor " + funding.ProcessorName
)

// nextStepFor is the next step of a refusal, where one helps.
func nextStepFor(err error) string {
	switch {
	case errors.Is(err, funding.ErrInvalidToken):
		return StepInvalidToken
	case errors.Is(err, funding.ErrAccountTaken):
		return StepAccountTaken
	case errors.Is(err, funding.ErrTooManySources):
		return StepTooManySources
	case errors.Is(err, funding.ErrCustomerNotFound):
		return StepCustomerNotFound
	}
	return ""
}

// failed records the failure of a request with an effect (a create, a
// verification) of a row in flight, by what it tells of the effect:
//   - refused: the row is rejected with the service's words and step;
//   - the key refused: the row is released and the run stops;
//   - lost: the row is in doubt, to be looked up before any resend;
//   - not done: the row is released and may be sent again, no sooner
//     than the service asked (Retry-After).
//
// It returns nil when the row reached an outcome, a permanent error when
// the run must stop, and a retryable one otherwise.
func (r *Runner) failed(k payment.RowKey, what string, err error, step string) error {
	return r.run.Failed(k, err, what, r.writes(k, step), func() { r.run.count(func(s *Summary) { s.Rejected++ }) }, nil)
}

// writes are the ledger writes of funding-source row k in flight; a
// rejection carries step, the next step it tells the finance team.
func (r *Runner) writes(k payment.RowKey, step string) rowrun.Writes {
	return rowrun.Writes{
		Reject:  func(msg string) error { _, err := r.led.RejectSource(k, msg, step); return err },
		Release: func(reason string) error { _, err := r.led.ReleaseSource(k, reason); return err },
		Doubt:   func(reason string) error { _, err := r.led.DoubtSource(k, reason); return err },
	}
}

// readFailed handles the failure of a read made before a row was sent
// (the customer's sources before a processor token leaves): the row is
// still pending. A refusal (an unknown customer) is the row's answer: it
// is sent to be rejected, with no request leaving.
func (r *Runner) readFailed(k payment.RowKey, what string, err error) error {
	switch payment.FailureOf(err) {
	case payment.FailKeyRefused:
		return r.run.Stop(fmt.Errorf("%w: %w", payment.ErrKeyRefused, err))
	case payment.FailRefused:
		if _, err := r.send(k, nil); err != nil {
			return err
		}
		msg := payment.ServiceMessage(err)
		if _, lerr := r.led.RejectSource(k, msg, nextStepFor(err)); lerr != nil {
			return r.run.LedgerFailed(fmt.Errorf("record the rejection of %s: %w", k, lerr))
		}
		r.run.count(func(s *Summary) { s.Rejected++ })
		r.log.Info("funding-source row refused by the service", "row", k.String(), "request", what, "reason", msg)
		return nil
	}
	// A read has no effect: whatever else went wrong, it may be read again.
	return retry.After(payment.RetryAfter(err), fmt.Errorf("%s: %w", what, err))
}

// release returns a row in flight to pending: nothing of it was done.
func (r *Runner) release(k payment.RowKey, reason string) error {
	return r.run.Release(k, reason, r.writes(k, "").Release)
}
