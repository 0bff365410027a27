// Package metrics holds batchd's Prometheus collectors on a registry of its
// own, so that nothing else linked into the binary can add to, or collide
// with, what /metrics exposes.
//
// Every label value is a fixed name chosen by batchd: a job name, a row
// state, an API operation such as "check.create", an outcome or an HTTP
// status code. No label ever carries an account number, a key, file content,
// a file name or a check id, because labels are kept forever by the
// monitoring system and are readable by anyone who can read dashboards.
//
// All methods are safe for concurrent use, and all are no-ops on a nil
// *Metrics, so that a package under test can be given no metrics at all.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric name.
const Namespace = "batchd"

// apiBuckets spans a fast API answer to the 30s default request timeout.
var apiBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// jobBuckets spans an empty ingest poll to a reconcile of many pages.
var jobBuckets = []float64{0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200}

// Metrics is batchd's set of collectors. Create it with New.
type Metrics struct {
	reg *prometheus.Registry

	rows          *prometheus.GaugeVec
	checksCreated prometheus.Counter
	checksFinal   *prometheus.CounterVec // outcomes.go
	apiRequests   *prometheus.CounterVec
	apiDuration   *prometheus.HistogramVec
	apiThrottled  prometheus.Counter
	apiRetries    *prometheus.CounterVec
	sendsDropped  prometheus.Counter
	jobDuration   *prometheus.HistogramVec
	jobLastOK     *prometheus.GaugeVec
	jobRuns       *prometheus.CounterVec
	jobSkips      *prometheus.CounterVec
	jobPanics     *prometheus.CounterVec
	jobFailures   *prometheus.CounterVec
	startTime     prometheus.Gauge
	filesIngested prometheus.Counter
	filesRejected prometheus.Counter
	reconCalls    prometheus.Gauge
	reconCallsAll prometheus.Counter
	reconCallsMin prometheus.Gauge
	webhooks      *prometheus.CounterVec
	leader        leaderMetrics // leader.go

	limiterRate atomic.Pointer[func() float64]
	inFlight    atomic.Pointer[func() float64]       // the in-flight limit's current value
	apiFailing  atomic.Pointer[func() time.Duration] // failing.go

	catalog []Family // every family registered through the factory

	rowsMu    sync.Mutex
	rowStates map[string]bool // states ever set, so a vanished state reads 0
}

// New returns a Metrics whose collectors, plus the Go runtime and process
// collectors, are registered on a new private registry.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), rowStates: map[string]bool{}}
	f := factory{reg: m.reg, catalog: &m.catalog}
	m.rows = f.gaugeVec("rows", "Rows in the ledger by state.", "state")
	m.checksCreated = f.counter("checks_created_total", "eChecks created (including ones found after a lost answer).")
	m.checksFinal = f.counterVec("checks_final_total", checksFinalHelp, "status")
	m.apiRequests = f.counterVec("api_requests_total",
		"eCheck API requests by operation and HTTP status code (\"error\" when no response arrived).", "endpoint", "code")
	m.apiDuration = f.histogramVec("api_request_duration_seconds",
		"Time from sending an eCheck API request to the end of its response.", apiBuckets, "endpoint")
	m.apiThrottled = f.counter("api_throttled_total", "eCheck API answers with status 429 Too Many Requests.")
	m.apiRetries = f.counterVec("api_retries_total", "eCheck API requests sent again after a temporary failure.", "endpoint")
	m.sendsDropped = f.counter("api_sends_dropped_total",
		"Check creates not sent because their send-by deadline had passed when their turn came (the row went in doubt, to be looked up): a sign of an instance that stalled, or lost the lead.")
	m.jobDuration = f.histogramVec("job_duration_seconds", "Duration of job runs.", jobBuckets, "job")
	m.jobLastOK = f.gaugeVec("job_last_success_timestamp_seconds",
		"Unix time at which the last successful run of the job started; 0 until its first success.", "job")
	m.jobRuns = f.counterVec("job_runs_total", "Finished job runs by outcome (ok, failed, canceled, panic).", "job", "outcome")
	m.webhooks = f.counterVec("webhook_deliveries_total",
		"Webhook requests received, by outcome (recorded, duplicate, unauthorized, wrong_path, not_found, rate_limited, too_large, bad_request, store_error, …).", "outcome")
	m.jobSkips = f.counterVec("job_skipped_total", "Scheduled job runs skipped, by reason: running (the job's previous run was still going; each tick counted, logged once per run) or standby (another instance leads; logged once per change of role).", "job", "reason")
	m.jobPanics = f.counterVec("job_panics_total", "Job runs that panicked (recovered).", "job")
	m.jobFailures = f.counterVec("job_failures_total",
		"Failed job runs (outcome failed or panic) by where the error came from: sftp, api, ledger or batchd, or timeout (the run passed its deadline).", "job", "source")
	m.startTime = f.gauge("start_time_seconds",
		"Unix time at which batchd's scheduler started: the \"not succeeding\" alerts measure from it a job that has not succeeded yet.")
	m.filesIngested = f.counter("files_ingested_total", "Payment files whose rows were recorded.")
	m.filesRejected = f.counter("files_rejected_total", "Payment files moved to the failed directory.")
	m.reconCalls = f.gauge("reconcile_api_calls",
		"eCheck API requests (list pages and check fetches, retries included) of the last reconcile run.")
	m.reconCallsAll = f.counter("reconcile_api_calls_total", "eCheck API requests made by reconcile runs.")
	m.reconCallsMin = f.gauge("reconcile_api_calls_minimum",
		"The fewest eCheck API requests the last reconcile run's plan could take, by batchd's estimate; beside reconcile_api_calls, what re-reads, retries and checks made elsewhere added.")
	m.leader = newLeaderMetrics(f)
	m.initSeries() // initial.go: fixed label values at 0 from the first scrape
	f.gaugeFunc("api_failing_seconds", apiFailingHelp, m.readAPIFailing)
	f.gaugeFunc("api_limiter_rate", "Current request rate (per second) allowed by the adaptive API limiter.", m.readLimiterRate)
	f.gaugeFunc("api_concurrency_limit",
		"Current limit on eCheck creates in flight at once: rate x latency x headroom, at most api.concurrency.", m.readConcurrencyLimit)
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus exposition formats. A
// collector that fails (the process collector cannot read all of /proc
// under the systemd sandbox) loses its own series only, never the whole
// scrape. A nil Metrics serves 404.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, ErrorHandling: promhttp.ContinueOnError})
}

// Registry returns the private registry, for tests and for gathering.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// SetRows sets the row counts by state. A state set by an earlier call and
// absent now reads 0, rather than keeping its old value or vanishing.
func (m *Metrics) SetRows(byState map[string]int) {
	if m == nil {
		return
	}
	m.rowsMu.Lock()
	defer m.rowsMu.Unlock()
	for state := range m.rowStates {
		if _, ok := byState[state]; !ok {
			m.rows.WithLabelValues(state).Set(0)
		}
	}
	for state, n := range byState {
		m.rowStates[state] = true
		m.rows.WithLabelValues(state).Set(float64(n))
	}
}

// ChecksCreated adds n created eChecks.
func (m *Metrics) ChecksCreated(n int) {
	if m == nil || n <= 0 {
		return
	}
	m.checksCreated.Add(float64(n))
}

// ObserveAPI records one API request. Its signature matches the eCheck
// client's Options.Observe hook. endpoint must be a fixed operation name;
// status 0 (no response) is recorded as code "error". A 429 also counts in
// batchd_api_throttled_total, so callers do not count 429s themselves.
func (m *Metrics) ObserveAPI(endpoint string, status int, d time.Duration) {
	if m == nil {
		return
	}
	code := "error"
	if status > 0 {
		code = strconv.Itoa(status)
	}
	m.apiRequests.WithLabelValues(endpoint, code).Inc()
	m.apiDuration.WithLabelValues(endpoint).Observe(d.Seconds())
	if status == http.StatusTooManyRequests {
		m.apiThrottled.Inc()
	}
}

// APIRetry counts one request about to be sent again after a temporary
// failure of the operation endpoint.
func (m *Metrics) APIRetry(endpoint string) {
	if m == nil {
		return
	}
	m.apiRetries.WithLabelValues(endpoint).Inc()
}

// SendsDropped adds n check creates not sent because their send-by
// deadline had passed. Its signature matches submit.Options.OnSendDropped.
func (m *Metrics) SendsDropped(n int) {
	if m == nil || n <= 0 {
		return
	}
	m.sendsDropped.Add(float64(n))
}

// SetLimiterRate makes batchd_api_limiter_rate read rate at every scrape
// (for example throttle.Limiter.Rate). Until it is set the gauge reads 0.
// rate must be cheap and safe for concurrent use.
func (m *Metrics) SetLimiterRate(rate func() float64) {
	if m == nil {
		return
	}
	m.limiterRate.Store(&rate)
}

// SetConcurrencyLimit makes batchd_api_concurrency_limit read limit at
// every scrape (jobs.Env.InFlight's Current). Until it is set the gauge
// reads 0. limit must be cheap and safe for concurrent use.
func (m *Metrics) SetConcurrencyLimit(limit func() float64) {
	if m == nil {
		return
	}
	m.inFlight.Store(&limit)
}

func (m *Metrics) readConcurrencyLimit() float64 {
	if f := m.inFlight.Load(); f != nil && *f != nil {
		return (*f)()
	}
	return 0
}

func (m *Metrics) readLimiterRate() float64 {
	if f := m.limiterRate.Load(); f != nil && *f != nil {
		return (*f)()
	}
	return 0
}

// ObserveJob records one finished job run: its outcome and duration.
func (m *Metrics) ObserveJob(job, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.jobRuns.WithLabelValues(job, outcome).Inc()
	m.jobDuration.WithLabelValues(job).Observe(d.Seconds())
}

// SetJobLastSuccess sets the start time of the job's last successful run.
func (m *Metrics) SetJobLastSuccess(job string, at time.Time) {
	if m == nil || at.IsZero() {
		return
	}
	m.jobLastOK.WithLabelValues(job).Set(float64(at.UnixNano()) / 1e9)
}

// InitJob makes the job's series exist from the start: its last success
// at 0 (no success yet), its runs by outcome, skips, panics, failures by
// source and its duration histogram at 0. An alert can then tell "never
// succeeded" from "not exported", and see the first failure as an
// increase. A series that exists already keeps its value.
func (m *Metrics) InitJob(job string, outcomes, sources []string) {
	if m == nil {
		return
	}
	m.jobLastOK.WithLabelValues(job)
	m.jobPanics.WithLabelValues(job)
	m.jobDuration.WithLabelValues(job)
	for _, reason := range SkipReasons {
		m.jobSkips.WithLabelValues(job, reason)
	}
	for _, o := range outcomes {
		m.jobRuns.WithLabelValues(job, o)
	}
	m.InitJobFailures(job, sources...)
}

// SetStartTime records when the scheduler started
// (batchd_start_time_seconds).
func (m *Metrics) SetStartTime(at time.Time) {
	if m == nil {
		return
	}
	m.startTime.Set(float64(at.UnixNano()) / 1e9)
}

// SkipReasons are the values of batchd_job_skipped_total{reason}: the
// job's previous run was still going, or this instance is a standby
// (another instance leads and runs the jobs).
var SkipReasons = []string{"running", "standby"}

// JobSkipped counts a scheduled run not started, for reason (one of
// SkipReasons).
func (m *Metrics) JobSkipped(job, reason string) {
	if m == nil {
		return
	}
	m.jobSkips.WithLabelValues(job, reason).Inc()
}

// JobPanicked counts a job run that panicked.
func (m *Metrics) JobPanicked(job string) {
	if m == nil {
		return
	}
	m.jobPanics.WithLabelValues(job).Inc()
}

// InitJobFailures makes batchd_job_failures_total{job,source} read 0 for
// each of sources before the job's first failure, so that an alert on its
// increase sees the first failure too (a series that appears at 1 has no
// increase).
func (m *Metrics) InitJobFailures(job string, sources ...string) {
	if m == nil {
		return
	}
	for _, src := range sources {
		m.jobFailures.WithLabelValues(job, src)
	}
}

// JobFailed counts a failed (or panicked) run of the job, under where its
// error came from: "sftp", "api", "ledger" or "batchd" (payment.SourceOf).
func (m *Metrics) JobFailed(job, source string) {
	if m == nil {
		return
	}
	m.jobFailures.WithLabelValues(job, source).Inc()
}

// FilesIngested adds n payment files whose rows were recorded.
func (m *Metrics) FilesIngested(n int) {
	if m == nil || n <= 0 {
		return
	}
	m.filesIngested.Add(float64(n))
}

// FilesRejected adds n payment files moved to the failed directory.
func (m *Metrics) FilesRejected(n int) {
	if m == nil || n <= 0 {
		return
	}
	m.filesRejected.Add(float64(n))
}

// ReconcileCalls records the API requests of one reconcile run: the gauge
// shows the last run's, so that a dashboard sees what webhooks save a day,
// and the counter their sum, which survives a scrape missed between runs.
func (m *Metrics) ReconcileCalls(n int) {
	if m == nil || n < 0 {
		return
	}
	m.reconCalls.Set(float64(n))
	m.reconCallsAll.Add(float64(n))
}

// ReconcileMinCalls records the fewest requests the last reconcile run's
// plan could take (reconcile.Summary.MinCalls), so that a dashboard can
// set the calls made against it.
func (m *Metrics) ReconcileMinCalls(n int) {
	if m == nil || n < 0 {
		return
	}
	m.reconCallsMin.Set(float64(n))
}
