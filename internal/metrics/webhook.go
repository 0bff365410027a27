package metrics

// webhookOutcomes are the values of batchd_webhook_deliveries_total
// {outcome}: the Outcome constants of internal/webhook (which cannot be
// imported here: its tests import this package). A test compares the two.
// Their series exist from New (initSeries), so that
// BatchdWebhookDeliveriesRefused (deploy/prometheus/alerts.yml) sees the
// first refusals as an increase.
var webhookOutcomes = []string{
	"recorded", "duplicate", "not_found", "wrong_path", "bad_method", "unauthorized",
	"rate_limited", "too_large", "read_error", "bad_request", "store_error",
}

// WebhookDelivery counts one request to the webhook receiver by its
// outcome (a fixed word of internal/webhook, never a value from the
// request), so that an alert can tell forged or failing deliveries from
// events recorded.
func (m *Metrics) WebhookDelivery(outcome string) {
	if m == nil {
		return
	}
	m.webhooks.WithLabelValues(outcome).Inc()
}
