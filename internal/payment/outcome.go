package payment

import (
	"strings"
	"time"
)

// Outcome is what a payment's status says of the money: paid, on its way,
// not paid, or cancelled on request. Reports and the demo sum amounts by outcome, never across
// outcomes, so that no figure that reads as "paid" holds money that did
// not reach the payee.
type Outcome string

// The outcomes, in the order reports list them.
const (
	OutcomePaid     Outcome = "paid"       // deposited: the money reached the payee
	OutcomeOnItsWay Outcome = "on_its_way" // not final yet: in process, in review, printed, or a status batchd does not know
	OutcomeNotPaid  Outcome = "not_paid"   // failed, void, deleted, or the row was rejected: the payee is still owed
	// OutcomeCancelled: voided by batchd because a cancel file asked
	// (Row.Cancelled): stopped on purpose, so no one is owed by it.
	OutcomeCancelled Outcome = "cancelled"
)

// Outcomes lists every outcome in report order.
var Outcomes = []Outcome{OutcomePaid, OutcomeOnItsWay, OutcomeNotPaid, OutcomeCancelled}

// Outcome is the one classification of a check status by what it says
// of the money. A status batchd does not know is on its way: it is not
// final (Final), so batchd keeps watching it, and nothing says it was paid
// or not.
func (s Status) Outcome() Outcome {
	switch s {
	case StatusDeposited:
		return OutcomePaid
	case StatusFailed, StatusVoid, StatusDeleted:
		return OutcomeNotPaid
	}
	return OutcomeOnItsWay
}

// Outcome is the row's outcome: its check's (Status.Outcome) once it has
// one, unless a cancel file had batchd void it (cancelled); not paid when
// the service refused the create (no check will ever be made for the
// row); on its way while it waits to be sent, is held or in doubt, since
// it may still be paid. Reports take a row's outcome from here.
func (r *Row) Outcome() Outcome {
	switch r.State {
	case Submitted:
		if _, asked := r.Cancelled(); asked {
			return OutcomeCancelled
		}
		return r.CheckStatus.Outcome()
	case Rejected:
		return OutcomeNotPaid
	}
	return OutcomeOnItsWay
}

// VoidedByBatchdNote starts the history note of a void batchd made itself
// (submit.void_on_risk); the ledger writes it and VoidedByBatchd reads it.
const VoidedByBatchdNote = "voided by batchd: "

// StatusSince is when the row's check was first recorded in its current
// status: the first step of its history that carries it, or StatusSeenAt
// when the history does not say. Exceptions about a final outcome stay in
// the reports for a number of days counted from it.
func (r *Row) StatusSince() time.Time {
	for _, s := range r.History {
		if s.State == Submitted && s.CheckStatus == r.CheckStatus {
			return s.At
		}
	}
	return r.StatusSeenAt
}

// CancelNote starts the reason of a void a cancel file asked for
// (jobs.Cancel): the check was stopped on a person's request, so no one
// is owed by it and it is no exception; Cancelled reads it.
const CancelNote = "cancel file: "

// Cancelled returns the reason a cancel file gave for voiding the row's
// check, and whether one did.
func (r *Row) Cancelled() (string, bool) {
	why, ok := r.VoidedByBatchd()
	if !ok {
		return "", false
	}
	return strings.CutPrefix(why, CancelNote)
}

// VoidedByBatchd returns why batchd voided the row's check itself, and
// whether it did: a void recorded by any other way (reconcile or a
// webhook saw it) was made at the service by someone else.
func (r *Row) VoidedByBatchd() (string, bool) {
	if r.CheckStatus != StatusVoid {
		return "", false
	}
	for _, s := range r.History {
		if why, ok := strings.CutPrefix(s.Note, VoidedByBatchdNote); ok && s.CheckStatus == StatusVoid {
			return why, true
		}
	}
	return "", false
}
