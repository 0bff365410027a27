package metrics

import "time"

// apiFailingHelp is batchd_api_failing_seconds' help text.
const apiFailingHelp = "How long every eCheck API call has failed, with no success in between (from the first failed call to the latest); 0 while the API answers, and once no call has been made for health.failing_after. /healthz turns red at health.failing_after, and a submit run stops trying at twice that."

// SetAPIFailing has batchd_api_failing_seconds read fn at each scrape
// (daemon.OutageWatch.Failing of "api"). Until it is called the gauge
// reads 0, so the series exists from the first scrape.
func (m *Metrics) SetAPIFailing(fn func() time.Duration) {
	if m == nil || fn == nil {
		return
	}
	m.apiFailing.Store(&fn)
}

func (m *Metrics) readAPIFailing() float64 {
	if fn := m.apiFailing.Load(); fn != nil {
		return (*fn)().Seconds()
	}
	return 0
}
