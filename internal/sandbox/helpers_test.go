package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Test keys. keyA and keyB have the full plan; keyBasic lacks fund
// confirmation.
const (
	keyA     = "sk_test_alpha"
	keyB     = "sk_test_beta"
	keyBasic = "sk_test_basic"
)

// monday is the start of every test clock: Monday 2 March 2026, 10:00 UTC.
func monday() time.Time { return time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC) }

// testClock is a settable real clock for Options.Now.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// harness is a Server behind a real loopback HTTP server.
type harness struct {
	t      testing.TB
	srv    *Server
	url    string
	client *http.Client
	clock  *testClock
}

// newHarness starts a server. Unless opts say otherwise it knows keyA, keyB
// and keyBasic, and its clock is a testClock frozen at monday().
func newHarness(t testing.TB, opts Options) *harness {
	t.Helper()
	clock := &testClock{t: monday()}
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	if opts.Keys == nil {
		opts.Keys = []Key{{Value: keyA, FundConfirmation: true}, {Value: keyB, FundConfirmation: true}, {Value: keyBasic}}
	}
	srv := New(opts)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { _ = srv.Close() }) // runs first: no delivery outlives the test
	return &harness{t: t, srv: srv, url: ts.URL, client: ts.Client(), clock: clock}
}

// resp is a decoded answer.
type resp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// msg is the error message of an answer.
func (r resp) msg() string { s, _ := r.body["message"].(string); return s }

// check is the "check" object of an answer.
func (r resp) check() map[string]any { m, _ := r.body["check"].(map[string]any); return m }

// list is the "list" object of an answer.
func (r resp) list() map[string]any { m, _ := r.body["list"].(map[string]any); return m }

// data is the list's data array.
func (r resp) data() []any { d, _ := r.list()["data"].([]any); return d }

// send makes one request; it fails the test on a transport error.
func (h *harness) send(method, path, key, ctype, body string) resp {
	h.t.Helper()
	r, err := h.try(context.Background(), method, path, key, ctype, body)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// try makes one request and returns transport errors.
func (h *harness) try(ctx context.Context, method, path, key, ctype, body string) (resp, error) {
	req, err := http.NewRequestWithContext(ctx, method, h.url+path, strings.NewReader(body))
	if err != nil {
		return resp{}, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := h.client.Do(req)
	if err != nil {
		return resp{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return resp{}, err
	}
	out := resp{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&out.body); err != nil {
			return resp{}, err
		}
	}
	return out, nil
}

// post sends v as JSON.
func (h *harness) post(path, key string, v any) resp {
	h.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.send(http.MethodPost, path, key, typeJSON, string(b))
}

func (h *harness) get(path, key string) resp {
	h.t.Helper()
	return h.send(http.MethodGet, path, key, "", "")
}

// validCheck is a create body that passes every rule: test account 16
// (risk Pass, sufficient funds).
func validCheck() map[string]any {
	return map[string]any{
		"amount": "12.34", "memo": "Invoice 1", "name": "Ada Lovelace", "email": "ada@example.com",
		"bank_routing": FixtureRouting, "bank_account": "1111000016",
	}
}

// with returns validCheck with changes; a nil value deletes the field.
func with(changes map[string]any) map[string]any {
	m := validCheck()
	for k, v := range changes {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

// create posts a check and requires success; it returns the check.
func (h *harness) create(key string, changes map[string]any) map[string]any {
	h.t.Helper()
	r := h.post("/v1/check/create", key, with(changes))
	if r.status != http.StatusOK {
		h.t.Fatalf("create: %d %s", r.status, r.raw)
	}
	return r.check()
}

// advance moves key's sandbox clock.
func (h *harness) advance(key string, days int) {
	h.t.Helper()
	r := h.post("/_sandbox/clock", key, map[string]any{"advance_days": days})
	if r.status != http.StatusOK {
		h.t.Fatalf("advance: %d %s", r.status, r.raw)
	}
}

// status fetches a check's status.
func (h *harness) status(key, id string) string {
	h.t.Helper()
	r := h.get("/v1/check/"+id, key)
	if r.status != http.StatusOK {
		h.t.Fatalf("get %s: %d %s", id, r.status, r.raw)
	}
	return r.check()["status"].(string)
}

// wantStatus fails unless r has the status.
func wantStatus(t testing.TB, r resp, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.raw)
	}
}

// wantField fails unless r is a 400 naming field, in the error envelope.
func wantField(t testing.TB, r resp, field string) {
	t.Helper()
	wantStatus(t, r, http.StatusBadRequest)
	if r.body["error"] != true || !strings.HasPrefix(r.msg(), field+":") {
		t.Fatalf("want error naming %q, got %s", field, r.raw)
	}
}

// eventually polls cond until it holds or a deadline passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
