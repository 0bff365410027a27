package metrics

// alertedWebhookOutcomes are the outcomes BatchdWebhookDeliveriesRefused
// watches (deploy/prometheus/alerts.yml): their series exist from start.
var alertedWebhookOutcomes = []string{"unauthorized", "wrong_path", "store_error"}

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
