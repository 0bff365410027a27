package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// scrape returns the text exposition of m.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape status %d", rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestMetricsExposition(t *testing.T) {
	t.Parallel()
	m := New()
	m.SetRows(map[string]int{"pending": 5, "in_doubt": 2})
	m.SetRows(map[string]int{"pending": 3, "created": 4}) // in_doubt vanished
	m.ChecksCreated(4)
	m.ObserveAPI("check.create", 200, 120*time.Millisecond)
	m.ObserveAPI("check.create", 429, 10*time.Millisecond)
	m.ObserveAPI("check.list", 0, time.Second)
	m.APIRetry("check.create")
	rate := 7.5
	m.SetLimiterRate(func() float64 { return rate })
	m.SetConcurrencyLimit(func() float64 { return 9 })
	m.ObserveJob("ingest", "ok", 2*time.Second)
	m.SetJobLastSuccess("ingest", time.Unix(1700000000, 0))
	m.JobSkipped("ingest", "running")
	m.JobPanicked("submit")
	m.InitJobFailures("ingest", "sftp", "ledger")
	m.JobFailed("ingest", "sftp")
	m.JobFailed("submit", "api")
	m.FilesIngested(2)
	m.FilesRejected(1)
	m.WebhookDelivery("recorded")
	m.ReconcileCalls(1001)
	m.ReconcileCalls(3)
	m.ReconcileMinCalls(2)

	body := scrape(t, m)
	for _, want := range []string{
		`batchd_rows{state="pending"} 3`,
		`batchd_rows{state="created"} 4`,
		`batchd_rows{state="in_doubt"} 0`,
		`batchd_checks_created_total 4`,
		`batchd_api_requests_total{code="200",endpoint="check.create"} 1`,
		`batchd_api_requests_total{code="429",endpoint="check.create"} 1`,
		`batchd_api_requests_total{code="error",endpoint="check.list"} 1`,
		`batchd_api_request_duration_seconds_count{endpoint="check.create"} 2`,
		`batchd_api_throttled_total 1`,
		`batchd_api_retries_total{endpoint="check.create"} 1`,
		`batchd_api_limiter_rate 7.5`,
		`batchd_api_concurrency_limit 9`,
		`batchd_job_runs_total{job="ingest",outcome="ok"} 1`,
		`batchd_job_duration_seconds_sum{job="ingest"} 2`,
		`batchd_job_last_success_timestamp_seconds{job="ingest"} 1.7e+09`,
		`batchd_job_skipped_total{job="ingest",reason="running"} 1`,
		`batchd_job_panics_total{job="submit"} 1`,
		`batchd_job_failures_total{job="ingest",source="sftp"} 1`,
		`batchd_job_failures_total{job="ingest",source="ledger"} 0`,
		`batchd_job_failures_total{job="submit",source="api"} 1`,
		`batchd_files_ingested_total 2`,
		`batchd_files_rejected_total 1`,
		`batchd_reconcile_api_calls 3`,
		`batchd_reconcile_api_calls_total 1004`,
		`batchd_reconcile_api_calls_minimum 2`,
		`process_start_time_seconds`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}

func TestRegistriesArePrivate(t *testing.T) {
	t.Parallel()
	a, b := New(), New() // a shared registry would panic on duplicate registration
	a.FilesIngested(3)
	if strings.Contains(scrape(t, b), "batchd_files_ingested_total 3") {
		t.Error("two Metrics share collectors")
	}
}

func TestNilMetricsIsNoOp(t *testing.T) {
	t.Parallel()
	var m *Metrics
	m.SetRows(map[string]int{"pending": 1})
	m.ChecksCreated(1)
	m.ObserveAPI("check.create", 200, time.Second)
	m.APIRetry("check.create")
	m.SetLimiterRate(func() float64 { return 1 })
	m.ObserveJob("ingest", "ok", time.Second)
	m.SetJobLastSuccess("ingest", time.Now())
	m.JobSkipped("ingest", "running")
	m.JobPanicked("ingest")
	m.InitJobFailures("ingest", "ledger")
	m.JobFailed("ingest", "ledger")
	m.FilesIngested(1)
	m.FilesRejected(1)
	m.WebhookDelivery("recorded")
	m.ReconcileCalls(1)
	if m.Registry() != nil || m.Families() != nil {
		t.Error("nil Metrics has a registry")
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("nil Metrics handler = %d, want 404", rec.Code)
	}
}

// TestFamiliesMatchExposition checks the catalog against what a scrape
// shows once every collector has a series: same names, same label names.
func TestFamiliesMatchExposition(t *testing.T) {
	t.Parallel()
	m := New()
	m.SetRows(map[string]int{"pending": 1})
	m.ChecksCreated(1)
	m.ObserveAPI("check.create", 429, time.Second)
	m.APIRetry("check.create")
	m.ObserveJob("ingest", "ok", time.Second)
	m.SetJobLastSuccess("ingest", time.Now())
	m.JobSkipped("ingest", "running")
	m.JobPanicked("ingest")
	m.JobFailed("ingest", "batchd")
	m.FilesIngested(1)
	m.FilesRejected(1)
	m.WebhookDelivery("recorded")
	m.ReconcileCalls(1)

	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	scraped := map[string][]string{} // batchd_ family -> label names
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), Namespace+"_") {
			continue
		}
		var labels []string
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			labels = append(labels, lp.GetName())
		}
		scraped[mf.GetName()] = labels
	}
	fams := m.Families()
	if len(fams) != len(scraped) {
		t.Errorf("Families lists %d families, the scrape has %d: %v", len(fams), len(scraped), scraped)
	}
	for _, f := range fams {
		got, ok := scraped[f.Name]
		if !ok {
			t.Errorf("family %s is not scraped", f.Name)
			continue
		}
		if strings.Join(got, ",") != strings.Join(sorted(f.Labels), ",") {
			t.Errorf("family %s: labels %v, scrape shows %v", f.Name, f.Labels, got)
		}
		if f.Type != "counter" && f.Type != "gauge" && f.Type != "histogram" {
			t.Errorf("family %s: type %q", f.Name, f.Type)
		}
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}

// TestJobSeriesExistFromStart: InitJob makes a job's last success read 0
// and its counters 0 before anything happened, and keeps a value already
// set; SetStartTime sets batchd_start_time_seconds.
func TestJobSeriesExistFromStart(t *testing.T) {
	t.Parallel()
	m := New()
	m.SetJobLastSuccess("submit", time.Unix(1700000000, 0))
	m.JobSkipped("submit", "running")
	for _, job := range []string{"reconcile", "submit"} {
		m.InitJob(job, []string{"ok", "failed"}, []string{"api", "timeout"})
	}
	m.SetStartTime(time.Unix(1800000000, 0))
	body := scrape(t, m)
	for _, want := range []string{
		`batchd_job_last_success_timestamp_seconds{job="reconcile"} 0` + "\n",
		`batchd_job_runs_total{job="reconcile",outcome="failed"} 0` + "\n",
		`batchd_job_failures_total{job="reconcile",source="timeout"} 0` + "\n",
		`batchd_job_skipped_total{job="reconcile",reason="running"} 0` + "\n",
		`batchd_job_skipped_total{job="reconcile",reason="standby"} 0` + "\n",
		`batchd_job_panics_total{job="reconcile"} 0` + "\n",
		`batchd_job_duration_seconds_count{job="reconcile"} 0` + "\n",
		`batchd_job_last_success_timestamp_seconds{job="submit"} 1.7e+09` + "\n",
		`batchd_job_skipped_total{job="submit",reason="running"} 1` + "\n",
		`batchd_start_time_seconds 1.8e+09` + "\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %q", strings.TrimSpace(want))
		}
	}
}
