package echeck

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
)

// testKey is distinctive so that a leak into any text is easy to find.
const testKey = "sk_test_Zq9XLEAKCANARY77wv"

const (
	testID      = "6f1e2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
	testToken   = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	testRouting = "999900001"
	testAccount = "1111000016"
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

// fakeService starts an httptest server that records every request (body
// read in full) and hands it to answer.
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

// reply answers with status and a JSON (or any) body.
func reply(status int, body string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
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

// canonJSON re-encodes JSON with sorted keys and numbers kept as written,
// so two bodies compare by content, not by field order.
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

// checkJSON is a check as public clients show it, with amount and number
// substituted.
func checkJSON(amount, number string) string {
	return `{"check_id":"` + testID + `","date":"2026-11-20 10:00:00","number":` + number +
		`,"amount":` + amount + `,"memo":"rent","name":"Ann Lee","email":"ann@example.com",` +
		`"label":"batch-7-row-3","authorization_date":"2026-11-20","status":"in_process",` +
		`"bank_account":"1..........016","bank_routing":"999900001","bank_name":"Test Bank"}`
}
