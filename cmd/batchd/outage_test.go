package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/payment"
)

// outageProxy stands for the API's host: it forwards TCP to a sandbox
// process while up; down closes its listener and every open connection,
// so that batchd's calls are refused or reset, as when the service's host
// goes away. The sandbox keeps its checks in memory, so the outage is cut
// here rather than by killing it: when the API returns, its checks are
// still there to count.
type outageProxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]bool
}

func newOutageProxy(t *testing.T, target string) *outageProxy {
	p := &outageProxy{addr: freePort(t), target: target, conns: map[net.Conn]bool{}}
	p.up(t)
	t.Cleanup(p.down)
	return p
}

// up listens on the proxy's address again.
func (p *outageProxy) up(t *testing.T) {
	t.Helper()
	var ln net.Listener
	var err error
	eventually(t, "the proxy to listen on "+p.addr, 10*time.Second, func() bool {
		ln, err = net.Listen("tcp", p.addr)
		return err == nil
	})
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *outageProxy) forward(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, s) {
		return
	}
	go func() { io.Copy(s, c); s.Close() }()
	io.Copy(c, s)
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
}

// track registers an open pair; false (both closed) when the proxy went
// down meanwhile.
func (p *outageProxy) track(c, s net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		c.Close()
		s.Close()
		return false
	}
	p.conns[c], p.conns[s] = true, true
	return true
}

// down refuses new connections and cuts the open ones.
func (p *outageProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// outageHealth is what the test reads of /healthz.
type outageHealth struct {
	Status string `json:"status"`
	Jobs   []struct {
		Name        string `json:"name"`
		Running     bool   `json:"running"`
		LastOutcome string `json:"last_outcome"`
		LastError   string `json:"last_error"`
	} `json:"jobs"`
	Failures []struct {
		Job    string `json:"job"`
		Check  string `json:"check"`
		Source string `json:"source"`
		Error  string `json:"error"`
	} `json:"failures"`
}

func (h outageHealth) submitRunning() bool {
	for _, j := range h.Jobs {
		if j.Name == "submit" {
			return j.Running
		}
	}
	return false
}

func (h outageHealth) apiOutage() string {
	for _, f := range h.Failures {
		if f.Check == "api" && f.Source == "api" {
			return f.Error
		}
	}
	return ""
}

// TestAPIOutageTurnsHealthRedAndStopsTheRun is issue 20's outage
// acceptance test: `batchd run` submitting 20 rows slowly, the API's host
// gone mid-run. /healthz turns red with the cause within
// health.failing_after + 10s while the run goes on; the circuit breaker
// ends the run failed in bounded time with the rows it did not send
// pending; when the API returns, the next run leaves exactly one check
// per row at the service.
func TestAPIOutageTurnsHealthRedAndStopsTheRun(t *testing.T) {
	const key, rows, failingAfter = "sk_test_outage_0123456789abcdef", 20, 3 * time.Second
	sandboxURL := startSandbox(t, "--key", key)
	proxy := newOutageProxy(t, strings.TrimPrefix(sandboxURL, "http://"))
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	loadRows(t, stateDir, rows)
	admin := freePort(t)
	// 4 creates a second: the run lasts 5s, long enough to cut it in the
	// middle. Attempts are many and backoffs short, so that only the
	// breaker (at 2 × failing_after) ends the run.
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
shutdown_timeout: 10s
log: {format: json}
api: {base_url: http://%s, mode: test, rate: 4, burst: 1, concurrency: 2, timeout: 2s}
submit: {resolve_after: 1s, max_attempts: 1000, backoff_max: 300ms}
schedule: {timezone: UTC, ingest: "0 0 1 1 *", submit: "0 0 1 1 *", reconcile: "0 0 1 1 *"}
backup: {schedule: ""}
admin: {listen: %s}
health: {failing_after: %s}
`, stateDir, proxy.addr, admin, failingAfter))
	start := time.Now()
	d := startDaemon(t, cfg, key)
	base := "http://" + admin
	trigger := func() {
		eventually(t, "a submit run to start", 20*time.Second, func() bool {
			resp, err := http.Post(base+"/v1/jobs/submit", "", nil)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusConflict
		})
	}
	// poke asks for a run once, whatever the answer: 409 while one goes
	// on, 429 past the trigger limit (a token a 20s).
	poke := func() {
		if resp, err := http.Post(base+"/v1/jobs/submit", "", nil); err == nil {
			resp.Body.Close()
		}
	}
	sb := client(t, sandboxURL, key)
	trigger()
	eventually(t, "a few checks created before the outage", 20*time.Second, func() bool {
		return len(allChecks(t, sb)) >= 5
	})

	proxy.down()
	cut := time.Now()
	t.Logf("the API cut %s after the daemon started", cut.Sub(start).Round(100*time.Millisecond))
	var hz outageHealth
	eventually(t, "/healthz red with the API's outage", failingAfter+10*time.Second, func() bool {
		hz = outageHealth{}
		code, err := getJSON(base+"/healthz", &hz)
		return err == nil && code == http.StatusServiceUnavailable && hz.apiOutage() != ""
	})
	red := time.Since(cut)
	if !hz.submitRunning() {
		t.Errorf("/healthz turned red only after the run ended (%s after the cut); want it red while the run goes on", red)
	}
	if msg := hz.apiOutage(); !strings.HasPrefix(msg, "the API has failed every call for ") || !strings.Contains(msg, "check.create") {
		t.Errorf("the outage's failure says %q; want how long and the last error", msg)
	}
	t.Logf("/healthz red %s after the cut: %s", red.Round(100*time.Millisecond), hz.apiOutage())
	if v := metricValue(getText(base+"/metrics"), "batchd_api_failing_seconds"); v < failingAfter.Seconds() {
		t.Errorf("batchd_api_failing_seconds = %v while /healthz is red, want at least %v", v, failingAfter.Seconds())
	}

	// The breaker ends the run at 2 × failing_after of failures; a
	// request out at that moment and a backoff bound the rest.
	var lastErr string
	eventually(t, "the submit run to end failed", 2*failingAfter+15*time.Second, func() bool {
		hz = outageHealth{}
		if _, err := getJSON(base+"/healthz", &hz); err != nil {
			return false
		}
		for _, j := range hz.Jobs {
			if j.Name == "submit" && !j.Running && j.LastOutcome == "failed" {
				lastErr = j.LastError
				return true
			}
		}
		return false
	})
	t.Logf("the run ended %s after the cut: %s", time.Since(cut).Round(100*time.Millisecond), lastErr)
	for _, want := range []string{"the API failed every call for", "rows left pending", "the next run tries again"} {
		if !strings.Contains(lastErr, want) {
			t.Errorf("the failed run's error %q does not say %q", lastErr, want)
		}
	}
	var st statusDoc
	if _, err := getJSON(base+"/v1/status", &st); err != nil {
		t.Fatal(err)
	}
	if st.Rows[string(payment.Pending)] == 0 || st.Rows[string(payment.InFlight)] != 0 {
		t.Errorf("rows after the breaker: %v; want some pending and none in flight", st.Rows)
	}

	// The API returns: the next run sends the rest and looks up any row
	// whose answer the cut lost; /healthz turns green.
	proxy.up(t)
	back := time.Now()
	trigger()
	eventually(t, "every row submitted and /healthz green", 60*time.Second, func() bool {
		st, hz = statusDoc{}, outageHealth{}
		if _, err := getJSON(base+"/v1/status", &st); err != nil || st.Rows[string(payment.Submitted)] != rows {
			if err == nil && st.Rows[string(payment.Pending)]+st.Rows[string(payment.InDoubt)] > 0 {
				poke() // a run ended with rows left (a lookup not yet due): start the next
			}
			return false
		}
		code, err := getJSON(base+"/healthz", &hz)
		return err == nil && code == http.StatusOK
	})
	t.Logf("every row submitted %s after the API returned", time.Since(back).Round(100*time.Millisecond))
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		if err != nil {
			t.Fatalf("batchd run after SIGTERM: %v (want exit 0)", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("batchd run did not stop after SIGTERM")
	}
	assertOneCheckPerRow(t, stateDir, sb, rows, func(r *payment.Row, ch echeck.Check) bool {
		return ch.Label == r.Label && ch.Number == r.Number && ch.Amount == r.Payment.Amount
	})
}
