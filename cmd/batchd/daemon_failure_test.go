package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/testsshd"
)

// healthDoc is the part of /healthz this test reads.
type healthDoc struct {
	Status string `json:"status"`
	Jobs   []struct {
		Name            string `json:"name"`
		LastOutcome     string `json:"last_outcome"`
		LastError       string `json:"last_error"`
		LastErrorSource string `json:"last_error_source"`
	} `json:"jobs"`
	Failures []struct {
		Job    string `json:"job"`
		Check  string `json:"check"`
		Source string `json:"source"`
		Error  string `json:"error"`
	} `json:"failures"`
}

// TestDaemonReportsAFailedSubmit is issue 9's daemon acceptance test:
// `batchd run` against a sandbox that fails every request. The submit run
// that cannot create any check is a failed outcome everywhere: /healthz
// answers 503 and names the job, "api" as the source and the error;
// batchd_job_runs_total counts it as failed; the log line says so; and it
// is never recorded as a success. SIGTERM still stops batchd cleanly.
func TestDaemonReportsAFailedSubmit(t *testing.T) {
	const key, rows = "sk_test_failure_0123456789abcdef", 3
	sshd := testsshd.Start(t)
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		os.MkdirAll(filepath.Join(sshd.Root, d), 0o755)
	}
	if err := os.WriteFile(filepath.Join(sshd.Root, "inbox", "payroll.csv"), []byte(paymentFile(rows)), 0o644); err != nil {
		t.Fatal(err)
	}
	url := startSandbox(t, "--key", key, "--error-rate", "1.0")
	dir := t.TempDir()
	admin := freePort(t)
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
shutdown_timeout: 10s
log: {format: json}
api: {base_url: %s, mode: test, rate: 100, burst: 10, concurrency: 2, timeout: 2s}
sftp:
  address: %s
  user: %s
  identity_file: %s
  known_hosts: %s
  inbox: %s/inbox
  archive: %s/archive
  failed: %s/failed
  outbox: %s/outbox
ingest: {stable_for: 200ms}
submit: {resolve_after: 200ms, max_attempts: 2, backoff_max: 100ms}
schedule: {timezone: UTC, ingest: "@every 1s", submit: "@every 1h", reconcile: "@every 1h"}
admin: {listen: %s}
`, filepath.Join(dir, "state"), url, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
		sshd.Root, sshd.Root, sshd.Root, sshd.Root, admin))

	d := startDaemon(t, cfg, key)
	base := "http://" + admin
	var st statusDoc
	eventually(t, "the file ingested", 30*time.Second, func() bool {
		code, err := getJSON(base+"/v1/status", &st)
		return err == nil && code == 200 && st.Rows["pending"]+st.Rows["in_doubt"]+st.Rows["in_flight"] == rows
	})
	// Ingest asks for a submit as soon as it recorded rows, so this one may
	// find submit running already (409); either way submit runs now.
	resp, err := http.Post(base+"/v1/jobs/submit", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusConflict {
		t.Fatalf("POST /v1/jobs/submit = %d, want 202 or 409", resp.StatusCode)
	}

	var (
		hz   healthDoc
		code int
	)
	eventually(t, "/healthz to report the failed submit", 60*time.Second, func() bool {
		hz = healthDoc{}
		code, err = getJSON(base+"/healthz", &hz)
		for _, f := range hz.Failures {
			if f.Job == "submit" {
				return true
			}
		}
		return false
	})
	t.Logf("/healthz %d: %+v", code, hz)
	if code != http.StatusServiceUnavailable || hz.Status != "unavailable" {
		t.Errorf("/healthz with submit failing = %d %q, want 503 unavailable", code, hz.Status)
	}
	for _, f := range hz.Failures {
		switch {
		case f.Job == "submit":
			if f.Source != "api" || !strings.Contains(f.Error, "left work undone") {
				t.Errorf("submit failure = %+v, want source api and the error", f)
			}
		case f.Job == "ingest":
			t.Errorf("ingest reported failing: %+v", f)
		}
	}
	for _, j := range hz.Jobs {
		if j.Name == "submit" && (j.LastOutcome != "failed" || j.LastErrorSource != "api") {
			t.Errorf("submit job health = %+v", j)
		}
	}

	metrics := getText(base + "/metrics")
	if !strings.Contains(metrics, `batchd_job_runs_total{job="submit",outcome="failed"}`) {
		t.Errorf("/metrics does not count the failed submit:\n%s", grepLines(metrics, "batchd_job_"))
	}
	// Every job's series exist from start, at 0 until they happen.
	if !strings.Contains(metrics, `batchd_job_runs_total{job="submit",outcome="ok"} 0`+"\n") ||
		!strings.Contains(metrics, `batchd_job_last_success_timestamp_seconds{job="submit"} 0`+"\n") {
		t.Errorf("/metrics shows a successful submit:\n%s", grepLines(metrics, "batchd_job_"))
	}
	line := logLine(t, d.logs.String(), func(m map[string]any) bool {
		return m["msg"] == "job finished" && m["job"] == "submit"
	})
	if line["outcome"] != "failed" || line["source"] != "api" || line["level"] != "ERROR" ||
		!strings.Contains(fmt.Sprint(line["error"]), "left work undone") {
		t.Errorf("the submit's log line = %v", line)
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
	logs := d.logs.String()
	if strings.Contains(logs, "database not open") || strings.Contains(logs, "stop did not finish cleanly") {
		t.Errorf("the ledger was used after it closed, or the stop was not clean:\n%s", lastLines(logs, 20))
	}
	assertNoSecrets(t, logs, key, sshd.IdentityFile)

	// The failed submit was never recorded as the job's last success; the
	// ingests that worked were.
	db, err := state.Open(filepath.Join(dir, "state"), state.Options{})
	if err != nil {
		t.Fatalf("open the ledger after the stop: %v", err)
	}
	defer db.Close()
	if _, ok, err := db.LastSuccess("submit"); ok || err != nil {
		t.Errorf("the ledger records a last success of submit (%v)", err)
	}
	if _, ok, err := db.LastSuccess("ingest"); !ok || err != nil {
		t.Errorf("the ledger records no last success of ingest (%v)", err)
	}
}

// logLine returns the first JSON log line that match accepts.
func logLine(t *testing.T, logs string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	for _, l := range strings.Split(logs, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && match(m) {
			return m
		}
	}
	t.Fatalf("no matching log line in:\n%s", lastLines(logs, 40))
	return nil
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
