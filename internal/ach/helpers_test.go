package ach

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
)

// testKey is distinctive so that a leak into any text is easy to find.
const testKey = "sk_test_Zq9XLEAKCANARY77wv"

const (
	testUser    = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	testSource  = "6f1e2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
	testRouting = "999900001"
	testAccount = "98765432109876"
	testToken   = "processor-sandbox-TOKENCANARY-1f2e3d4c"
)

// seen is one request as the fake service received it.
type seen struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// recorder keeps the requests a fake service received.
type recorder struct {
	mu   sync.Mutex
	reqs []seen
}

func (r *recorder) all() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.reqs...)
}

func (r *recorder) last(t *testing.T) seen {
	t.Helper()
	all := r.all()
	if len(all) == 0 {
		t.Fatal("the fake service received no request")
	}
	return all[len(all)-1]
}

// fakeService starts an httptest server that records every request and
// hands it to answer.
func fakeService(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, body []byte)) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("fake service: reading body: %v", err)
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		rec.mu.Unlock()
		answer(w, r, body)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

// reply answers with status and body.
func reply(status int, body string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// hangUp reads the whole request, then closes the connection without a
// word: the request arrived, the answer is lost.
func hangUp(w http.ResponseWriter, _ *http.Request, _ []byte) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	conn.Close()
}

// closedAddr is a loopback URL on which nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// Contract-shaped answers (docs/ach-wire.md).
const (
	userJSON = `{"user_id":"` + testUser + `","firstName":"Ann","lastName":"Lee","email":"ann@example.com",` +
		`"phone":"5550100","created_at":"2026-03-04 12:00:00","sources":[]}`
	sourceJSON = `{"source_id":"` + testSource + `","funding_source_id":"` + testSource + `","user_id":"` + testUser + `",` +
		`"status":"Pending","is_primary":false,"routing":"999900001","bank":"Test Bank","bank_name":"Test Bank",` +
		`"lbacc":"9876","last_four":"9876","type":"checking","nickname":"rent","created_at":"03/04/2026"}`
)

// okAnswers answers every endpoint of the contract with its success shape.
func okAnswers(w http.ResponseWriter, r *http.Request, _ []byte) {
	p := r.URL.Path
	if i := strings.Index(p, PathPrefix); i >= 0 {
		p = p[i+len(PathPrefix):]
	}
	body := `{"success":true}`
	switch {
	case p == "/user" && r.Method == "POST":
		body = `{"success":true,"user_id":"` + testUser + `","user":` + userJSON + `}`
	case p == "/user":
		body = `{"success":true,"list":{"current_page":1,"last_page":1,"per_page":15,"total":1,"data":[` + userJSON + `]}}`
	case strings.HasPrefix(p, "/user/"):
		body = `{"success":true,"user":` + userJSON + `}`
	case p == "/funding-source", p == "/on-demand/funding-source":
		body = `{"success":true,"funding_source_id":"` + testSource + `","status":"Pending","bank_name":"Test Bank","last_four":"9876","funding_source":` + sourceJSON + `}`
	case strings.HasPrefix(p, "/funding-source/processor/"):
		body = `{"success":true,"funding_source":` + strings.Replace(sourceJSON, `"Pending"`, `"verified"`, 1) + `}`
	case strings.HasPrefix(p, "/funding-source/user/"):
		body = `{"success":true,"list":[` + sourceJSON + `]}`
	case p == "/funding-source/initiate/verification":
		body = `{"success":true,"funding_source_id":"` + testSource + `","status":"Pending","message":"Micro-deposits sent"}`
	case p == "/funding-source/verify":
		body = `{"success":true,"funding_source_id":"` + testSource + `","status":"Verified"}`
	case strings.HasPrefix(p, "/funding-source/:"):
		body = `{"success":true,"funding_source":` + sourceJSON + `}`
	case p == "/accounts":
		body = `{"success":true,"available":true}`
	case p == "/ach-debit", p == "/check/send":
		body = `{"success":true,"check_id":"c0ffee00-0000-4000-8000-000000000001"}`
	case p == "/webhooks":
		body = `{"success":true,"webhook_url":"https://batchd.example/hook"}`
	}
	reply(200, body)(w, r, nil)
}

// fakeLimiter counts its uses; it also has the optional Pause method.
type fakeLimiter struct {
	waits     atomic.Int32
	throttled atomic.Int32
	mu        sync.Mutex
	pauses    []time.Duration
}

func (l *fakeLimiter) Wait(ctx context.Context) error {
	l.waits.Add(1)
	return ctx.Err()
}

func (l *fakeLimiter) Throttled() { l.throttled.Add(1) }

func (l *fakeLimiter) Pause(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pauses = append(l.pauses, d)
}

func newTestClient(t *testing.T, baseURL string, tweak ...func(*apiwire.Options)) *Client {
	t.Helper()
	opts := apiwire.Options{BaseURL: baseURL, Key: testKey, Timeout: 5 * time.Second}
	for _, f := range tweak {
		f(&opts)
	}
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// canonJSON re-encodes JSON with sorted keys and numbers kept as written.
func canonJSON(t *testing.T, b []byte) string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// asError returns err as an *Error or fails the test.
func asError(t *testing.T, err error) *apiwire.Error {
	t.Helper()
	e, ok := err.(*apiwire.Error)
	if !ok {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	return e
}

// errorsIs is errors.Is, named so that tests read as the caller would.
func errorsIs(err, target error) bool { return errors.Is(err, target) }
