package metrics

import "github.com/batchd/batchd/internal/payment"

// finalStatuses are the values of batchd_checks_final_total{status}: every
// final payment.Status (a test compares them with payment's constants).
// Their series exist from New, so that BatchdPaymentsReturned
// (deploy/prometheus/alerts.yml) sees the first returned check as an
// increase rather than as a series that appears at 1.
var finalStatuses = []payment.Status{payment.StatusDeposited, payment.StatusFailed, payment.StatusVoid, payment.StatusDeleted}

const checksFinalHelp = "Checks that reached a final status, by status, counted by what recorded it first (reconcile, a webhook event, submit's void): deposited (paid), " +
	"failed (returned by the service: the payee is not paid), void (voided, by batchd for its risk result or at the service), deleted."

// ChecksFinal counts checks that reached a final status, n per status,
// as what recorded the status first tells it: a reconcile run, the
// webhook receiver (jobs.WebhookHandler), a submit run (a void for the
// risk result). Each records a final status only on a row not final yet,
// so a check is counted once. A status that is not final is ignored: the counter is
// about how payments ended.
func (m *Metrics) ChecksFinal(byStatus map[payment.Status]int) {
	if m == nil {
		return
	}
	for s, n := range byStatus {
		if s.Final() && n > 0 {
			m.checksFinal.WithLabelValues(string(s)).Add(float64(n))
		}
	}
}
