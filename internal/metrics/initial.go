package metrics

import "github.com/batchd/batchd/internal/payment"

// rowStates are the values of batchd_rows{state}: every payment.RowState.
// A test (labels_test.go) compares this list with the constants of
// internal/payment, so that a new state cannot be left out.
var rowStates = []payment.RowState{
	payment.Pending, payment.InFlight, payment.InDoubt, payment.Held, payment.Submitted, payment.Rejected,
}

// retriedEndpoints are the values of batchd_api_retries_total{endpoint}:
// the operations internal/submit sends again after a temporary failure.
// A test compares it with submit's calls.
var retriedEndpoints = []string{"check.create", "check.list"}

// watchedCodes are the batchd_api_requests_total{code} values made at 0
// for those endpoints: success, and the key's refusals the alert watches.
var watchedCodes = []string{"200", "401", "403"}

// initSeries makes the series of batchd's fixed label values exist from
// New, at 0: every row state, every retried endpoint and every webhook
// outcome. A series that appears only with its first event shows "No
// data" on a dashboard until then, and an alert on its increase misses
// that first event (a series that appears at 1 has no increase). The
// per-job series are made by InitJob, as the job names come from the
// scheduler.
func (m *Metrics) initSeries() {
	for _, s := range rowStates {
		m.rows.WithLabelValues(string(s))
		m.rowStates[string(s)] = true // SetRows sets it to 0 when absent
	}
	for _, e := range retriedEndpoints {
		m.apiRetries.WithLabelValues(e)
		// The calls every submit and reconcile makes, with the codes the
		// dashboard and BatchdAPIKeyRefused select: a first 401 then
		// shows as an increase, and the latency panel has its series.
		for _, code := range watchedCodes {
			m.apiRequests.WithLabelValues(e, code)
		}
		m.apiDuration.WithLabelValues(e)
	}
	for _, o := range webhookOutcomes {
		m.webhooks.WithLabelValues(o)
	}
	for _, s := range finalStatuses {
		m.checksFinal.WithLabelValues(string(s))
	}
}
