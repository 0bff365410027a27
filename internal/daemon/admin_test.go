package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/metrics"
)

// do sends one request to h and returns the status and body.
func do(t *testing.T, h http.Handler, method, path string, hdr map[string]string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func TestAdminJobs(t *testing.T) {
	t.Parallel()
	g := newGate()
	defer close(g.release)
	s := newStarted(t, []Job{{Name: "ingest", Spec: yearly, Run: g.run}, okJob("submit", yearly)}, Options{})
	h := s.AdminHandler(AdminOptions{})
	steps := []struct {
		method, path string
		hdr          map[string]string
		want         int
	}{
		{"POST", "/v1/jobs/ingest", nil, http.StatusAccepted},
		{"POST", "/v1/jobs/ingest", nil, http.StatusConflict}, // still running (gated)
		{"POST", "/v1/jobs/payroll", nil, http.StatusNotFound},
		{"GET", "/v1/jobs/ingest", nil, http.StatusMethodNotAllowed},
		{"DELETE", "/v1/jobs/submit", nil, http.StatusMethodNotAllowed},
		{"PUT", "/v1/jobs/submit", nil, http.StatusMethodNotAllowed},
		{"POST", "/v1/jobs/submit", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
	}
	for i, st := range steps {
		code, body := do(t, h, st.method, st.path, st.hdr)
		if code != st.want {
			t.Fatalf("step %d: %s %s = %d %s, want %d", i, st.method, st.path, code, body, st.want)
		}
		if i == 0 {
			g.waitStart(t)
		}
	}
	// Begin stopping without waiting: ingest is still gated.
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Stop(expired); err == nil {
		t.Error("Stop returned nil while ingest was still running")
	}
	code, _ := do(t, h, "POST", "/v1/jobs/submit", nil)
	if code != http.StatusServiceUnavailable {
		t.Errorf("POST while stopping = %d, want 503", code)
	}
}

func TestHealthzAndMetrics(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	m := metrics.New()
	fail := Job{Name: "submit", Spec: yearly, Run: func(context.Context) (string, error) {
		return "0 sent", errors.New("create check row-7: API 503")
	}}
	s := newStarted(t, []Job{okJob("ingest", "@hourly"), fail}, Options{Logger: logs.logger(), Metrics: m})
	var stateErr error
	rec := NewErrorRecorder(nil)
	rec.Record("sftp", errors.New("dial sftp.example.com:22: connection refused"))
	h := s.AdminHandler(AdminOptions{Check: func() error { return stateErr }, Errors: rec})

	for _, name := range []string{"ingest", "submit"} {
		if err := s.Trigger(name); err != nil {
			t.Fatal(err)
		}
		logs.waitFor(t, 1, "job finished", map[string]string{"job": name})
	}
	s.wg.Wait() // both runs fully recorded

	code, body := do(t, h, "GET", "/healthz", nil)
	if code != http.StatusOK {
		t.Fatalf("/healthz = %d %s, want 200", code, body)
	}
	var hz healthzBody
	if err := json.Unmarshal([]byte(body), &hz); err != nil {
		t.Fatalf("decode /healthz: %v\n%s", err, body)
	}
	if hz.Status != "ok" || !hz.Alive || len(hz.Jobs) != 2 {
		t.Fatalf("/healthz = %+v", hz)
	}
	in, sub := hz.Jobs[0], hz.Jobs[1]
	if in.Name != "ingest" || in.LastOutcome != OutcomeOK || in.LastSummary != "ingest done" || in.NextRun.IsZero() || in.LastSuccess.IsZero() {
		t.Errorf("ingest health = %+v", in)
	}
	if sub.LastOutcome != OutcomeError || sub.LastError != "create check row-7: API 503" || !sub.LastSuccess.IsZero() {
		t.Errorf("submit health = %+v", sub)
	}
	if hz.LastError == nil || hz.LastError.Job != "submit" {
		t.Errorf("last job error = %+v, want submit's", hz.LastError)
	}
	if e := hz.Errors["sftp"]; !strings.Contains(e.Error, "connection refused") || e.At.IsZero() {
		t.Errorf("sftp error in /healthz = %+v", e)
	}

	stateErr = errors.New("ledger closed")
	if code, body := do(t, h, "GET", "/healthz", nil); code != http.StatusServiceUnavailable || !strings.Contains(body, "ledger closed") {
		t.Errorf("/healthz with the state check failing = %d %s, want 503 naming the cause", code, body)
	}
	stateErr = nil

	code, body = do(t, h, "GET", "/metrics", nil)
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		`batchd_job_runs_total{job="ingest",outcome="ok"} 1`,
		`batchd_job_runs_total{job="submit",outcome="error"} 1`,
		`batchd_job_duration_seconds_count{job="ingest"} 1`,
		`batchd_job_last_success_timestamp_seconds{job="ingest"}`,
		`batchd_api_limiter_rate 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, `job_last_success_timestamp_seconds{job="submit"}`) {
		t.Error("/metrics shows a last success for submit, which never succeeded")
	}

	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, body := do(t, h, "GET", "/healthz", nil); code != http.StatusServiceUnavailable || !strings.Contains(body, `"alive": false`) {
		t.Errorf("/healthz after Stop = %d %s, want 503 not alive", code, body)
	}
}

func TestStatusEndpoint(t *testing.T) {
	t.Parallel()
	var fail bool
	s := newStarted(t, []Job{okJob("ingest", yearly)}, Options{Status: func(ctx context.Context) (any, error) {
		if fail {
			return nil, errors.New("read ledger: closed")
		}
		return map[string]int{"pending": 3}, nil
	}})
	h := s.AdminHandler(AdminOptions{})
	if code, body := do(t, h, "GET", "/v1/status", nil); code != 200 || !strings.Contains(body, `"pending": 3`) {
		t.Errorf("/v1/status = %d %s", code, body)
	}
	fail = true
	if code, body := do(t, h, "GET", "/v1/status", nil); code != 500 || !strings.Contains(body, "read ledger") {
		t.Errorf("/v1/status failing = %d %s", code, body)
	}
	if code, _ := do(t, h, "POST", "/v1/status", nil); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /v1/status = %d, want 405", code)
	}
	bare := newStarted(t, []Job{okJob("ingest", yearly)}, Options{}).AdminHandler(AdminOptions{})
	for _, p := range []string{"/v1/status", "/metrics"} {
		if code, _ := do(t, bare, "GET", p, nil); code != http.StatusNotFound {
			t.Errorf("GET %s without it configured = %d, want 404", p, code)
		}
	}
}

func TestServeListenerShutsDown(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- ServeListener(ctx, ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "hi")
		}))
	}()
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hi" {
		t.Fatalf("body %q", b)
	}
	cancel()
	if err := recv(t, done, "ServeListener to return"); err != nil {
		t.Fatalf("ServeListener: %v", err)
	}
	if err := Serve(context.Background(), ln.Addr().String()+"x", nil); err == nil {
		t.Error("Serve on a bad address returned nil")
	}
}
