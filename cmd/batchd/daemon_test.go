package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/testsshd"
)

// syncBuffer collects a process's output safely while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// daemonProc is one `batchd run` process.
type daemonProc struct {
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan error
}

func startDaemon(t *testing.T, cfg, key string) *daemonProc {
	t.Helper()
	p := &daemonProc{cmd: exec.Command(binary, "run", "--config", cfg), logs: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), "BATCHD_API_KEY="+key)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("batchd run log:\n%s", lastLines(p.logs.String(), 40))
		}
	})
	return p
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func getJSON(url string, v any) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, json.NewDecoder(resp.Body).Decode(v)
}

func getText(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

type statusDoc struct {
	Rows map[string]int `json:"rows"`
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestDaemonEndToEnd is issue 6's acceptance test: `batchd run` as a
// process, with second-level schedules, against the real sshd and a
// sandbox process.
func TestDaemonEndToEnd(t *testing.T) {
	const key, rows = "sk_test_daemon_0123456789abcdef", 300
	sshd := testsshd.Start(t)
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		os.MkdirAll(filepath.Join(sshd.Root, d), 0o755)
	}
	url := startSandbox(t, "--key", key, "--latency", "30ms")
	dir := t.TempDir()
	admin := freePort(t)
	config := func(reconcileSpec string) string {
		return writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
shutdown_timeout: 10s
log: {format: json}
api: {base_url: %s, mode: test, rate: 60, burst: 5, concurrency: 4, timeout: 5s}
sftp:
  address: %s
  user: %s
  identity_file: %s
  known_hosts: %s
  inbox: %s/inbox
  archive: %s/archive
  failed: %s/failed
  outbox: %s/outbox
ingest: {stable_for: 500ms}
submit: {resolve_after: 1s}
schedule: {timezone: UTC, ingest: "@every 2s", submit: "@every 2s", reconcile: %q}
admin: {listen: %s}
`, filepath.Join(dir, "state"), url, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
			sshd.Root, sshd.Root, sshd.Root, sshd.Root, reconcileSpec, admin))
	}
	cfg := config("@every 1h")
	csv := paymentFile(rows)
	if err := os.WriteFile(filepath.Join(sshd.Root, "inbox", "payroll.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}

	d := startDaemon(t, cfg, key)
	base := "http://" + admin
	var st statusDoc
	eventually(t, "rows submitted mid-run", 30*time.Second, func() bool {
		code, err := getJSON(base+"/v1/status", &st)
		return err == nil && code == 200 && st.Rows["submitted"] > 20 && st.Rows["pending"] > 20
	})
	start := time.Now()
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		if err != nil {
			t.Fatalf("batchd run after SIGTERM: %v (want exit 0)", err)
		}
	case <-time.After(12 * time.Second):
		t.Fatal("batchd run did not stop within shutdown_timeout")
	}
	t.Logf("stopped %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	firstLogs := d.logs.String()

	d = startDaemon(t, cfg, key)
	eventually(t, "every row submitted after the restart", 60*time.Second, func() bool {
		code, err := getJSON(base+"/v1/status", &st)
		return err == nil && code == 200 && st.Rows["submitted"] == rows
	})
	var health struct {
		Jobs []struct {
			Name        string `json:"name"`
			Schedule    string `json:"schedule"`
			LastOutcome string `json:"last_outcome"`
		} `json:"jobs"`
	}
	// ingest, submit, reconcile, and backup on its default schedule.
	if code, err := getJSON(base+"/healthz", &health); code != 200 || err != nil || len(health.Jobs) != 4 {
		t.Fatalf("/healthz: %d %v %+v", code, err, health)
	}
	metrics := getText(base + "/metrics")
	for _, m := range []string{"batchd_job_runs_total", `batchd_api_requests_total{code="200",endpoint="check.create"}`, "batchd_rows", "batchd_api_limiter_rate", "batchd_files_ingested_total"} {
		if !strings.Contains(metrics, m) {
			t.Fatalf("/metrics lacks %s", m)
		}
	}

	// SIGHUP with a changed schedule, then with a broken file.
	config("@every 3s")
	d.cmd.Process.Signal(syscall.SIGHUP)
	eventually(t, "the new reconcile schedule", 10*time.Second, func() bool {
		getJSON(base+"/healthz", &health)
		for _, j := range health.Jobs {
			if j.Name == "reconcile" && strings.Contains(j.Schedule, "3s") {
				return true
			}
		}
		return false
	})
	os.WriteFile(cfg, []byte("api: [this is not valid\n"), 0o600)
	d.cmd.Process.Signal(syscall.SIGHUP)
	eventually(t, "the refusal of an invalid config", 10*time.Second, func() bool {
		return strings.Contains(d.logs.String(), "keeping the old one")
	})
	if code, _ := getJSON(base+"/healthz", &health); code != 200 {
		t.Fatalf("unhealthy after a refused reload: %d", code)
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-d.done; err != nil {
		t.Fatalf("second stop: %v", err)
	}

	assertNoSecrets(t, firstLogs+d.logs.String(), key, sshd.IdentityFile)
	checks := allChecks(t, client(t, url, key))
	ids := map[string]bool{}
	for _, c := range checks {
		ids[c.CheckID] = true
	}
	if len(checks) != rows || len(ids) != rows {
		t.Fatalf("the service holds %d checks (%d distinct), want %d", len(checks), len(ids), rows)
	}
}

// paymentFile makes a valid payment file of n rows on fixture accounts.
func paymentFile(n int) string {
	var b strings.Builder
	b.WriteString("number,amount,memo,name,email,bank_routing,bank_account\r\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d,%d.%02d,Invoice %d,Payee %d,p%d@example.com,999900001,11110000%02d\r\n",
			10000+i, 10+i, i%100, i, i, i, i%22+1)
	}
	return b.String()
}

// assertNoSecrets fails if a log carries the API key, the SSH private key
// or any full account number of the input.
func assertNoSecrets(t *testing.T, logs, key, identityFile string) {
	t.Helper()
	if strings.Contains(logs, key) {
		t.Fatal("a log line contains the API key")
	}
	priv, _ := os.ReadFile(identityFile)
	for _, line := range strings.Split(string(priv), "\n") {
		if len(line) > 20 && strings.Contains(logs, line) {
			t.Fatal("a log line contains the SSH private key")
		}
	}
	if m := regexp.MustCompile(`11110000\d\d`).FindString(logs); m != "" {
		t.Fatalf("a log line contains the full account number %s", m)
	}
}
