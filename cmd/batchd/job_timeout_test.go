package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// metricValue reads one series of a /metrics text by its exact name and
// labels as printed, such as `batchd_job_runs_total{job="x",outcome="ok"}`;
// -1 when it is absent.
func metricValue(text, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// timeoutHealth is the part of /healthz this test reads.
type timeoutHealth struct {
	Status string `json:"status"`
	Jobs   []struct {
		Name            string `json:"name"`
		Timeout         string `json:"timeout"`
		LastOutcome     string `json:"last_outcome"`
		LastError       string `json:"last_error"`
		LastErrorSource string `json:"last_error_source"`
	} `json:"jobs"`
	Failures []struct {
		Job    string `json:"job"`
		Source string `json:"source"`
		Error  string `json:"error"`
	} `json:"failures"`
}

// TestJobTimeoutFailsTheRunAndTheNextStartsOnTime is issue 17's deadline
// acceptance test: `batchd run` against a sandbox that answers every
// request after 5s, with reconcile every 3s and a reconcile_timeout of 2s.
// Each reconcile run is cancelled at its deadline and recorded failed with
// source "timeout" in /healthz, /metrics and the log; the next run starts
// at its own tick (no tick is skipped), and SIGTERM still stops batchd
// cleanly.
func TestJobTimeoutFailsTheRunAndTheNextStartsOnTime(t *testing.T) {
	const key = "sk_test_timeout_0123456789abcdef"
	url := startSandbox(t, "--key", key, "--latency", "5s")
	dir := t.TempDir()
	admin := freePort(t)
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
shutdown_timeout: 5s
log: {format: json}
api: {base_url: %s, mode: test, rate: 100, burst: 10, concurrency: 2, timeout: 20s}
submit: {max_attempts: 1}
schedule:
  timezone: UTC
  ingest: "0 0 1 1 *"
  submit: "0 0 1 1 *"
  reconcile: "@every 3s"
  reconcile_timeout: 2s
backup: {schedule: ""}
admin: {listen: %s}
`, filepath.Join(dir, "state"), url, admin))

	d := startDaemon(t, cfg, key)
	base := "http://" + admin

	var hz timeoutHealth
	eventually(t, "/healthz to report the reconcile timeout", 30*time.Second, func() bool {
		hz = timeoutHealth{}
		code, err := getJSON(base+"/healthz", &hz)
		if err != nil || code != 503 {
			return false
		}
		for _, f := range hz.Failures {
			if f.Job == "reconcile" && f.Source == "timeout" {
				return true
			}
		}
		return false
	})
	for _, f := range hz.Failures {
		if f.Job == "reconcile" && !strings.Contains(f.Error, "deadline of 2s") {
			t.Errorf("reconcile failure %+v: want the deadline in the error", f)
		}
	}
	for _, j := range hz.Jobs {
		if j.Name == "reconcile" && (j.Timeout != "2s" || j.LastOutcome != "failed" || j.LastErrorSource != "timeout") {
			t.Errorf("reconcile in /healthz = %+v, want timeout 2s, last outcome failed, source timeout", j)
		}
	}

	// The next run starts at its own tick, and is cut off at its deadline too.
	var metrics string
	eventually(t, "a second reconcile run cancelled at its deadline", 30*time.Second, func() bool {
		metrics = getText(base + "/metrics")
		return metricValue(metrics, `batchd_job_failures_total{job="reconcile",source="timeout"}`) >= 2
	})
	if v := metricValue(metrics, `batchd_job_runs_total{job="reconcile",outcome="failed"}`); v < 2 {
		t.Errorf("failed reconcile runs = %v, want at least 2:\n%s", v, grepLines(metrics, "batchd_job_"))
	}
	for series, want := range map[string]float64{
		`batchd_job_skipped_total{job="reconcile",reason="running"}`: 0, // each run ended before the next tick
		`batchd_job_runs_total{job="reconcile",outcome="ok"}`:        0,
		`batchd_job_last_success_timestamp_seconds{job="reconcile"}`: 0,
	} {
		if v := metricValue(metrics, series); v != want {
			t.Errorf("%s = %v, want %v", series, v, want)
		}
	}
	if v := metricValue(metrics, "batchd_start_time_seconds"); v <= 0 {
		t.Errorf("batchd_start_time_seconds = %v, want the start", v)
	}

	// Every finished reconcile says timeout, and ended within its period.
	runs := 0
	for _, l := range strings.Split(d.logs.String(), "\n") {
		if !strings.Contains(l, `"msg":"job finished"`) || !strings.Contains(l, `"job":"reconcile"`) {
			continue
		}
		runs++
		m := logLine(t, l, func(map[string]any) bool { return true })
		dur, err := time.ParseDuration(fmt.Sprint(m["duration"]))
		if m["outcome"] != "failed" || m["source"] != "timeout" || err != nil || dur >= 3*time.Second {
			t.Errorf("reconcile run %v: want failed with source timeout within 3s", m)
		}
	}
	if runs < 2 {
		t.Errorf("%d reconcile runs logged, want at least 2", runs)
	}
	if strings.Contains(d.logs.String(), "skipped scheduled run") || strings.Contains(d.logs.String(), "stuck past its deadline") {
		t.Errorf("a run was skipped or stuck:\n%s", lastLines(d.logs.String(), 20))
	}

	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		if err != nil {
			t.Fatalf("batchd run after SIGTERM: %v (want exit 0)", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("batchd run did not stop after SIGTERM")
	}
	if strings.Contains(d.logs.String(), key) {
		t.Error("a log line contains the API key")
	}
}
