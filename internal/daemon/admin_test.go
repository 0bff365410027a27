package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/metrics"
	"github.com/batchd/batchd/internal/payment"
)

// adminAddr is the address do's requests arrive on, as an admin server
// listening on 127.0.0.1:9464 sees them.
var adminAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9464}

// do sends one request to h, as received on adminAddr with that Host
// (unless hdr sets "Host"), and returns the status and body.
func do(t *testing.T, h http.Handler, method, path string, hdr map[string]string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, net.Addr(adminAddr)))
	req.Host = adminAddr.String()
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
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
	var submitOK atomic.Bool
	fail := Job{Name: "submit", Spec: yearly, Run: func(context.Context) (string, error) {
		if submitOK.Load() {
			return "3 sent", nil
		}
		return "0 sent", fmt.Errorf("create check row-7: %w", apiError{503})
	}}
	var recorded sync.Map
	s := newStarted(t, []Job{okJob("ingest", "@hourly"), fail}, Options{Logger: logs.logger(), Metrics: m,
		RecordSuccess: func(job string, at time.Time) error { recorded.Store(job, at); return nil }})
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

	// A failed submit makes batchd unhealthy, naming the job, the source
	// of its error and the error.
	code, body := do(t, h, "GET", "/healthz", nil)
	if code != http.StatusServiceUnavailable {
		t.Fatalf("/healthz with submit failing = %d %s, want 503", code, body)
	}
	var hz healthzBody
	if err := json.Unmarshal([]byte(body), &hz); err != nil {
		t.Fatalf("decode /healthz: %v\n%s", err, body)
	}
	if hz.Status != "unavailable" || hz.State != "open" || !hz.Alive || len(hz.Jobs) != 2 {
		t.Fatalf("/healthz = %+v", hz)
	}
	const msg = "create check row-7: API 503"
	in, sub := hz.Jobs[0], hz.Jobs[1]
	if in.Name != "ingest" || in.LastOutcome != OutcomeOK || in.LastSummary != "ingest done" || in.NextRun.IsZero() || in.LastSuccess.IsZero() || in.Failing != nil {
		t.Errorf("ingest health = %+v", in)
	}
	if sub.LastOutcome != OutcomeFailed || sub.LastError != msg || sub.LastErrorSource != "api" || !sub.LastSuccess.IsZero() ||
		sub.Failing == nil || sub.Failing.Source != "api" {
		t.Errorf("submit health = %+v", sub)
	}
	if len(hz.Failures) != 1 || hz.Failures[0].Job != "submit" || hz.Failures[0].Source != "api" || hz.Failures[0].Error != msg ||
		hz.Failures[0].Since.IsZero() {
		t.Errorf("failures = %+v, want submit's API error", hz.Failures)
	}
	if hz.LastError == nil || hz.LastError.Job != "submit" || hz.LastError.Source != "api" {
		t.Errorf("last job error = %+v, want submit's", hz.LastError)
	}
	if e := hz.Errors["sftp"]; !strings.Contains(e.Error, "connection refused") || e.At.IsZero() {
		t.Errorf("sftp error in /healthz = %+v", e)
	}
	if _, ok := recorded.Load("submit"); ok {
		t.Error("the failed submit was recorded as a success")
	}
	if _, ok := recorded.Load("ingest"); !ok {
		t.Error("the successful ingest was not recorded as a success")
	}
	line := logs.waitFor(t, 1, "job finished", map[string]string{"job": "submit"})[0]
	if line.level != slog.LevelError || line.attrs["outcome"] != "failed" || line.attrs["error"] != msg || line.attrs["source"] != "api" {
		t.Errorf("log line of the failed run = %v", line)
	}

	code, body = do(t, h, "GET", "/metrics", nil)
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		`batchd_job_runs_total{job="ingest",outcome="ok"} 1`,
		`batchd_job_runs_total{job="submit",outcome="failed"} 1`,
		`batchd_job_duration_seconds_count{job="ingest"} 1`,
		`batchd_job_last_success_timestamp_seconds{job="ingest"}`,
		`batchd_api_limiter_rate 0`,
		`batchd_api_concurrency_limit 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if !strings.Contains(body, `job_last_success_timestamp_seconds{job="submit"} 0`+"\n") {
		t.Error("/metrics does not show submit, which never succeeded, with a last success at 0")
	}

	// The ledger check failing is filed under "ledger".
	stateErr = &payment.LedgerError{Op: "read", Path: "/x/batchd.db", Err: errors.New("database not open")}
	code, body = do(t, h, "GET", "/healthz", nil)
	hz = healthzBody{}
	json.Unmarshal([]byte(body), &hz)
	if code != http.StatusServiceUnavailable || !strings.Contains(hz.State, "database not open") || len(hz.Failures) != 2 ||
		hz.Failures[0].Check != "ledger" || hz.Failures[0].Source != "ledger" || !strings.Contains(hz.Failures[0].Error, "cannot read the ledger") {
		t.Errorf("/healthz with the state check failing = %d %s, want 503 naming the ledger", code, body)
	}
	stateErr = nil

	// Healthy again once submit succeeds.
	submitOK.Store(true)
	if err := s.Trigger("submit"); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "submit", "outcome": "ok"})
	s.wg.Wait()
	code, body = do(t, h, "GET", "/healthz", nil)
	if code != http.StatusOK || strings.Contains(body, `"failures"`) || strings.Contains(body, `"failing"`) {
		t.Errorf("/healthz after submit succeeded = %d %s, want 200 with no failures", code, body)
	}
	if _, ok := recorded.Load("submit"); !ok {
		t.Error("the successful submit was not recorded as a success")
	}

	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, body := do(t, h, "GET", "/healthz", nil); code != http.StatusServiceUnavailable || !strings.Contains(body, `"alive": false`) {
		t.Errorf("/healthz after Stop = %d %s, want 503 not alive", code, body)
	}
}

// apiError stands for an error of the payment service's adapter.
type apiError struct{ code int }

func (e apiError) Error() string        { return fmt.Sprintf("API %d", e.code) }
func (e apiError) Is(target error) bool { return target == payment.ErrService }

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
