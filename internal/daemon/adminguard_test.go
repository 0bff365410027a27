package daemon

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/metrics"
)

// statusDoc stands for what /v1/status tells: file names and counts.
var statusDoc = map[string]any{"batches": []map[string]any{{"file": "payroll-2026-11-25.csv", "rows": 120}}}

func guardedScheduler(t *testing.T, opts Options) *Scheduler {
	t.Helper()
	opts.Metrics = metrics.New()
	opts.Status = func(context.Context) (any, error) { return statusDoc, nil }
	return newStarted(t, []Job{okJob("ingest", yearly), okJob("submit", yearly)}, opts)
}

// TestAdminHostForeignRefused: a request whose Host is not the address it
// arrived on nor an admin.hosts name gets 421 on every endpoint, and the
// body tells nothing of batchd's state (no file name, count or job).
func TestAdminHostForeignRefused(t *testing.T) {
	t.Parallel()
	s := guardedScheduler(t, Options{})
	h := s.AdminHandler(AdminOptions{})
	for _, host := range []string{"evil.example", "evil.example:9464", "127.0.0.1:9999", "localhost:80", "", "batchd.internal:9464", "[::1]"} {
		for _, ep := range []struct{ method, path string }{
			{"GET", "/healthz"}, {"GET", "/metrics"}, {"GET", "/v1/status"}, {"POST", "/v1/jobs/ingest"}, {"GET", "/nowhere"},
		} {
			code, body := do(t, h, ep.method, ep.path, map[string]string{"Host": host})
			if code != http.StatusMisdirectedRequest {
				t.Errorf("Host %q %s %s = %d, want 421", host, ep.method, ep.path, code)
			}
			for _, leak := range []string{"payroll", "120", "ingest", "submit", "batchd_", "alive"} {
				if strings.Contains(body, leak) {
					t.Errorf("Host %q %s %s: the 421 body tells %q: %s", host, ep.method, ep.path, leak, body)
				}
			}
		}
	}
	for _, j := range s.Health().Jobs {
		if !j.LastStart.IsZero() {
			t.Errorf("a refused trigger ran job %s", j.Name)
		}
	}
}

// TestAdminHostAllowed: the listen address itself, its loopback
// equivalents, and admin.hosts names are served.
func TestAdminHostAllowed(t *testing.T) {
	t.Parallel()
	s := guardedScheduler(t, Options{})
	h := s.AdminHandler(AdminOptions{Hosts: []string{"Batchd.Internal", "proxy.example:8443", "10.1.2.3"}})
	for _, host := range []string{"127.0.0.1:9464", "localhost:9464", "LOCALHOST:9464", "[::1]:9464", "127.0.0.2:9464",
		"batchd.internal", "batchd.internal:9464", "batchd.internal:1234", "proxy.example:8443", "10.1.2.3:80"} {
		if code, body := do(t, h, "GET", "/v1/status", map[string]string{"Host": host}); code != http.StatusOK || !strings.Contains(body, "payroll") {
			t.Errorf("Host %q = %d %s, want 200 with the status", host, code, body)
		}
	}
	if code, _ := do(t, h, "GET", "/healthz", map[string]string{"Host": "proxy.example:9464"}); code != http.StatusMisdirectedRequest {
		t.Errorf("proxy.example on another port than its admin.hosts entry = %d, want 421", code)
	}
}

// TestAdminHostOffLoopback: listening on a non-loopback address, the
// request's Host must be that address (or an admin.hosts name):
// "localhost" then names some other server.
func TestAdminHostOffLoopback(t *testing.T) {
	t.Parallel()
	s := guardedScheduler(t, Options{})
	h := s.AdminHandler(AdminOptions{})
	at := &net.TCPAddr{IP: net.ParseIP("10.0.0.5"), Port: 9464}
	get := func(host string) int {
		req, _ := http.NewRequestWithContext(context.WithValue(context.Background(), http.LocalAddrContextKey, net.Addr(at)), "GET", "/healthz", nil)
		req.Host = host
		rec := newRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := get("10.0.0.5:9464"); code != http.StatusOK {
		t.Errorf("own address = %d, want 200", code)
	}
	for _, host := range []string{"localhost:9464", "127.0.0.1:9464", "10.0.0.6:9464", "batchd.example:9464"} {
		if code := get(host); code != http.StatusMisdirectedRequest {
			t.Errorf("Host %q off loopback = %d, want 421", host, code)
		}
	}
}

// TestAdminHostOverTheWire: through a real listener, a rebinding page's
// request (its own name as Host) gets 421 and the right Host gets 200.
func TestAdminHostOverTheWire(t *testing.T) {
	t.Parallel()
	s := guardedScheduler(t, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.ServeAdmin(ln, s.AdminHandler(AdminOptions{}))
	for host, want := range map[string]int{"attacker.example:" + port(ln): http.StatusMisdirectedRequest, "": http.StatusOK, "localhost:" + port(ln): http.StatusOK} {
		req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/v1/status", nil)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || (want != http.StatusOK && strings.Contains(string(body), "payroll")) {
			t.Errorf("Host %q = %d %s, want %d", host, resp.StatusCode, body, want)
		}
	}
}

func port(ln net.Listener) string {
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}

// TestAdminTriggerRateLimit: past the burst, triggers of one job get 429
// with Retry-After, other jobs are not affected, and the bucket refills
// with the (test) clock.
func TestAdminTriggerRateLimit(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(clocktest.Monday)
	logs := newLogSink()
	g := newGate()
	defer close(g.release)
	s := newStarted(t, []Job{{Name: "ingest", Spec: yearly, Run: g.run}, okJob("submit", yearly)},
		Options{Now: clock.Now, Logger: logs.logger()})
	h := s.AdminHandler(AdminOptions{TriggerEvery: 20 * time.Second, TriggerBurst: 3})
	post := func(job string) (int, http.Header) {
		req := newAdminRequest("POST", "/v1/jobs/"+job)
		rec := newRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Header()
	}
	if code, _ := post("ingest"); code != http.StatusAccepted {
		t.Fatalf("first trigger = %d, want 202", code)
	}
	g.waitStart(t)
	for i := range 2 { // still running: 409, but each takes a token
		if code, _ := post("ingest"); code != http.StatusConflict {
			t.Fatalf("trigger %d = %d, want 409", i+2, code)
		}
	}
	for i := range 50 {
		code, hdr := post("ingest")
		if code != http.StatusTooManyRequests || hdr.Get("Retry-After") != "20" {
			t.Fatalf("trigger %d past the burst = %d, Retry-After %q; want 429, 20", i+4, code, hdr.Get("Retry-After"))
		}
	}
	if code, _ := post("submit"); code != http.StatusAccepted {
		t.Errorf("another job's trigger = %d, want 202", code)
	}
	if code, _ := post("payroll"); code != http.StatusNotFound {
		t.Errorf("unknown job = %d, want 404", code)
	}
	clock.Advance(20 * time.Second)
	if code, _ := post("ingest"); code != http.StatusConflict {
		t.Errorf("after 20 s = %d, want a token again (409: still running)", code)
	}
	if code, _ := post("ingest"); code != http.StatusTooManyRequests {
		t.Errorf("right after = %d, want 429", code)
	}
	if n := len(logs.matching("admin: refused requests", map[string]string{"reason": "trigger_rate"})); n != 1 {
		t.Errorf("%d log lines for 51 refused triggers within a minute, want 1:\n%s", n, logs.dump())
	}
}

// TestAdminToken: with a token, POST and /v1/status need it (401 with
// WWW-Authenticate otherwise), /healthz and /metrics do not; the token
// never reaches a log line.
func TestAdminToken(t *testing.T) {
	t.Parallel()
	const token = "adm1n-t0ken-0123456789abcdef"
	logs := newLogSink()
	s := guardedScheduler(t, Options{Logger: logs.logger()})
	h := s.AdminHandler(AdminOptions{Token: token})
	for _, auth := range []string{"", "Bearer", "Bearer wrong-token-0123456789abcdef", token, "Basic " + token, "Bearer " + token + "x"} {
		for _, ep := range []struct{ method, path string }{{"POST", "/v1/jobs/ingest"}, {"GET", "/v1/status"}} {
			code, body := doAuth(h, ep.method, ep.path, auth)
			if code != http.StatusUnauthorized || strings.Contains(body, "payroll") {
				t.Errorf("%s %s with Authorization %q = %d %s, want 401", ep.method, ep.path, auth, code, body)
			}
		}
	}
	req := newAdminRequest("POST", "/v1/jobs/submit")
	rec := newRecorder()
	h.ServeHTTP(rec, req)
	if rec.Header().Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	if code, _ := doAuth(h, "POST", "/v1/jobs/ingest", "Bearer "+token); code != http.StatusAccepted {
		t.Errorf("POST with the token = %d, want 202", code)
	}
	if code, body := doAuth(h, "GET", "/v1/status", "bearer  "+token); code != http.StatusOK || !strings.Contains(body, "payroll") {
		t.Errorf("GET /v1/status with the token = %d, want 200", code)
	}
	for _, p := range []string{"/healthz", "/metrics"} {
		if code, _ := doAuth(h, "GET", p, ""); code == http.StatusUnauthorized {
			t.Errorf("GET %s without the token = 401; probes and scrapers need no token", p)
		}
	}
	if strings.Contains(logs.dump(), token) {
		t.Errorf("the token reached the log:\n%s", logs.dump())
	}
}

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func newAdminRequest(method, path string) *http.Request {
	req, _ := http.NewRequestWithContext(context.WithValue(context.Background(), http.LocalAddrContextKey, net.Addr(adminAddr)), method, path, nil)
	req.Host = adminAddr.String()
	return req
}

func doAuth(h http.Handler, method, path, auth string) (int, string) {
	req := newAdminRequest(method, path)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := newRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}
