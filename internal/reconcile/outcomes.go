package reconcile

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// Outcomes a person must act on. A check that ends not paid (payment.
// OutcomeNotPaid) leaves the payee owed: it is an exception, with the
// service's reason where batchd has one and what to do, in every day's
// report for Options.ExceptionDays from the day batchd first recorded it
// so (payment.Row.StatusSince), and then no more: the rows stay in the
// status report, but the exceptions report lists what still needs a
// person, not every payment that ever bounced.
const (
	KindReturned = "returned" // the service failed the check: the money did not reach the payee
	KindVoided   = "voided"   // voided or deleted, at the service or by batchd (submit.void_on_risk): the payee is not paid
)

// DefaultExceptionDays is how many daily reports show a check that ended
// not paid (reconcile.exception_days).
const DefaultExceptionDays = 7

const (
	actionUnpaid        = "The payee was not paid: contact the payee, confirm the bank details, and pay again with a new check number."
	actionVoidElsewhere = "Someone voided this check at the service, not batchd: find out who and why; if the payee is still owed, contact the payee, confirm the bank details, and pay again with a new check number."
)

// unpaid is what an exception about a check that ended not paid says
// beyond the row: the service's results, and whether batchd voided it.
type unpaid struct {
	risk  string // the service's basic verification result at create
	funds string // the service's fund confirmation at create
	by    string // why batchd voided it itself; "" when batchd did not
	mine  bool   // batchd voided it (submit.void_on_risk)
}

// unpaidOf is the unpaid part of a row's record: nil unless its check
// ended not paid.
func unpaidOf(r *payment.Row) *unpaid {
	if r.State != payment.Submitted || r.CheckStatus.Outcome() != payment.OutcomeNotPaid {
		return nil
	}
	if _, asked := r.Cancelled(); asked {
		return nil // stopped on a person's request (a cancel file): nothing to act on
	}
	u := &unpaid{risk: r.Risk, funds: r.FundConfirmation}
	u.by, u.mine = r.VoidedByBatchd()
	return u
}

// finalSince is when a row's check was first recorded in its final
// status (payment.Row.StatusSince), or the zero time while it is not
// final: what the exceptions' days and the receipts' rewriting count
// from.
func finalSince(r *payment.Row) time.Time {
	if r.State != payment.Submitted || !r.CheckStatus.Final() {
		return time.Time{}
	}
	return r.StatusSince()
}

// outcomeWindow is which rows ended not paid recently enough to be
// reported: those first recorded so on a day from first on, in loc.
type outcomeWindow struct {
	first Date
	loc   *time.Location
}

// holds reports whether an outcome recorded at t falls in the window.
func (w outcomeWindow) holds(t time.Time) bool {
	return !t.IsZero() && !DateOf(t.In(w.loc)).Before(w.first)
}

// newOutcomeWindow is the window of a run on today keeping each
// exception for days daily reports (today and the days-1 before it).
func newOutcomeWindow(today Date, days int, loc *time.Location) outcomeWindow {
	return outcomeWindow{first: today.AddDays(1 - days), loc: loc}
}

// noteUnpaid makes rec, when its check ended not paid within the run's
// outcome window, an exception: returned for a failed check, voided for
// one voided or deleted.
func (m *matcher) noteUnpaid(rec *record) {
	u, since := rec.unpaid, rec.finalSince
	if u == nil || (!since.IsZero() && DateOf(since.In(m.outcomes.loc)).Before(m.outcomes.first)) {
		return
	}
	kind, action := KindVoided, actionUnpaid
	var what string
	switch {
	case rec.status == payment.StatusFailed:
		kind, what = KindReturned, "returned: the service failed the check (cancelled automatically for fraud or bad account details), so the money did not reach the payee"
	case u.mine:
		what = "voided by batchd: " + u.by + "; the payee is not paid"
	case rec.status == payment.StatusDeleted:
		what, action = "deleted at the service, not by batchd: the payee is not paid", actionVoidElsewhere
	default:
		what, action = "voided at the service, not by batchd: the payee is not paid", actionVoidElsewhere
	}
	parts := []string{what}
	if u.risk != "" {
		parts = append(parts, "risk result "+u.risk)
	}
	if u.funds != "" {
		parts = append(parts, "fund confirmation "+u.funds)
	}
	if !since.IsZero() {
		parts = append(parts, fmt.Sprintf("%s since %s", rec.status, since.In(m.outcomes.loc).Format(time.DateTime)))
	}
	e := rowException(kind, rec, m.file(rec.key.Batch))
	e.detail, e.action = strings.Join(parts, "; "), action
	m.mu.Lock()
	m.excs[kind+":"+rec.key.String()] = e
	m.mu.Unlock()
}

// noteFinal looks at a row of the status pass as it now is: a check
// that ended not paid may be an exception (noteUnpaid), and a check that
// reached its final status after its file's receipt was delivered has
// the receipt written again (noteReceipt).
func (m *matcher) noteFinal(rec *record) {
	if !rec.final() {
		return
	}
	m.noteReceipt(rec)
	m.noteUnpaid(rec)
}

// noteFinalRow is noteFinal for a row the status report leaves out (a
// final check outside the run's window): its exception still shows for
// its days, and its receipt still catches up.
func (m *matcher) noteFinalRow(r *payment.Row) {
	if r.State == payment.Submitted && r.CheckStatus.Final() {
		m.noteFinal(recordOf(r))
	}
}

// noteReceipt names rec's batch for its results report to be written
// again when its check reached its final status at or after the receipt
// was last delivered, however the status reached the ledger (this run,
// a webhook, a run that failed before its reports). Once written again
// the receipt's stamp is later than every such status, so no later run
// writes it again for the same checks. A history step's time is cut to
// the millisecond, so the stamp is too before they are compared: at
// worst a receipt is written once more.
func (m *matcher) noteReceipt(rec *record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	stamp, ok := m.receipts[rec.key.Batch]
	if !ok || rec.finalSince.Before(stamp.Truncate(time.Millisecond)) {
		return
	}
	if m.finalBatches == nil {
		m.finalBatches = map[uint64]bool{}
	}
	m.finalBatches[rec.key.Batch] = true
}

// finalsLocked counts the rows whose check this run saw reach a final
// status, from rows the ledger just changed, for the final-outcome
// counter. Called with m.mu held.
func (m *matcher) finalsLocked(rows map[payment.RowKey]*payment.Row) {
	for _, r := range rows {
		if r == nil || !r.CheckStatus.Final() {
			continue
		}
		if m.finals == nil {
			m.finals = map[payment.Status]int{}
		}
		m.finals[r.CheckStatus]++
	}
}

// fillFinals copies the run's final outcomes into the Summary.
func (m *matcher) fillFinals(sum *Summary) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sum.Final = maps.Clone(m.finals)
	sum.FinalBatches = slices.Sorted(maps.Keys(m.finalBatches))
}
