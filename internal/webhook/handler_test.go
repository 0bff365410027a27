package webhook

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

const (
	testSecret = "s3cr3t-path-token-0123456789abcdef"
	testKey    = "sk_test_webhookkey42"
	hookPath   = "/webhook/" + testSecret
	acct       = "123456789012" // an account number that must never reach a log
)

var changed = `{"event":"check.changed","data":{"check_id":"` + chk + `","status":"printed","bank_account":"` + acct + `"}}`

// memStore is an in-memory Store: a test double of the ledger.
type memStore struct {
	mu     sync.Mutex
	events map[string]Event
	calls  int
	err    error // returned by Record when set
	hasCtx bool  // Record's ctx had a deadline
}

func (s *memStore) Record(ctx context.Context, e Event) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	_, s.hasCtx = ctx.Deadline()
	if s.err != nil {
		return false, s.err
	}
	if s.events == nil {
		s.events = map[string]Event{}
	}
	if _, dup := s.events[e.ID]; dup {
		return true, nil
	}
	s.events[e.ID] = e
	return false, nil
}

func (s *memStore) count() (events, calls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events), s.calls
}

type fixture struct {
	h        *Handler
	store    *memStore
	logs     *syncBuffer
	mu       sync.Mutex
	outcomes []string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func newFixture(t *testing.T, edit func(*Options)) *fixture {
	t.Helper()
	f := &fixture{store: &memStore{}, logs: &syncBuffer{}}
	opts := Options{
		Secret: testSecret, Key: testKey, Path: "/webhook",
		Rate: rate.Inf, Store: f.store,
		Logger: slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Observe: func(o string) {
			f.mu.Lock()
			f.outcomes = append(f.outcomes, o)
			f.mu.Unlock()
		},
	}
	if edit != nil {
		edit(&opts)
	}
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	t.Cleanup(func() {
		logs := f.logs.String()
		for _, s := range []string{testSecret, testKey, acct} {
			if strings.Contains(logs, s) {
				t.Errorf("logs hold a secret, key or account number %q:\n%s", s, logs)
			}
		}
	})
	return f
}

func (f *fixture) do(method, path, ct, body string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if ct != "" {
		r.Header.Set("Content-Type", ct)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w
}

func (f *fixture) lastOutcomes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.outcomes...)
}

func wantStatus(t *testing.T, w *httptest.ResponseRecorder, want int) {
	t.Helper()
	if w.Code != want {
		t.Fatalf("status %d, want %d; body %q", w.Code, want, w.Body.String())
	}
}

func wantStored(t *testing.T, s *memStore, events, calls int) {
	t.Helper()
	if e, c := s.count(); e != events || c != calls {
		t.Fatalf("store holds %d events after %d calls, want %d after %d", e, c, events, calls)
	}
}

func TestHandlerRecords(t *testing.T) {
	f := newFixture(t, nil)
	wantStatus(t, f.do(http.MethodPost, hookPath, jsonCT, changed), http.StatusOK)
	wantStored(t, f.store, 1, 1)
	for _, e := range f.store.events {
		if e.CheckID != chk || e.CheckStatus != "printed" || !bytes.Equal(e.Raw, []byte(changed)) {
			t.Errorf("recorded %+v", e)
		}
	}
	if !f.store.hasCtx {
		t.Error("Record's context has no deadline")
	}
	if got := f.lastOutcomes(); len(got) != 1 || got[0] != OutcomeRecorded {
		t.Errorf("outcomes %v", got)
	}
	logs := f.logs.String()
	for _, s := range []string{"check.changed", "kind=check", chk, "outcome=recorded"} {
		if !strings.Contains(logs, s) {
			t.Errorf("log lacks %q:\n%s", s, logs)
		}
	}
}

func TestHandlerAuthorization(t *testing.T) {
	tests := []struct {
		name string
		path string
		auth []string
		want int
	}{
		{"no Authorization", hookPath, nil, http.StatusOK},
		{"bearer key", hookPath, []string{"Bearer " + testKey}, http.StatusOK},
		{"bearer, any case and spaces", hookPath, []string{"  bearer   " + testKey + " "}, http.StatusOK},
		{"bare key", hookPath, []string{testKey}, http.StatusOK},
		{"wrong bearer key", hookPath, []string{"Bearer sk_test_other"}, http.StatusUnauthorized},
		{"wrong bare key", hookPath, []string{"sk_test_other"}, http.StatusUnauthorized},
		{"key prefix", hookPath, []string{"Bearer " + testKey[:len(testKey)-1]}, http.StatusUnauthorized},
		{"empty Authorization", hookPath, []string{""}, http.StatusUnauthorized},
		{"Basic scheme", hookPath, []string{"Basic " + testKey}, http.StatusUnauthorized},
		{"two Authorization headers", hookPath, []string{"Bearer " + testKey, "Bearer " + testKey}, http.StatusUnauthorized},
		{"wrong secret", "/webhook/not-the-secret-0123456789", nil, http.StatusUnauthorized},
		{"wrong secret, right key", "/webhook/not-the-secret-0123456789", []string{"Bearer " + testKey}, http.StatusUnauthorized},
		{"secret prefix", hookPath[:len(hookPath)-1], nil, http.StatusUnauthorized},
		{"secret and more", hookPath + "x", nil, http.StatusUnauthorized},
		{"secret then a path", hookPath + "/x", nil, http.StatusUnauthorized},
		{"missing secret", "/webhook/", nil, http.StatusUnauthorized},
		{"base path alone", "/webhook", nil, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			var hdr []string
			for _, a := range tt.auth {
				hdr = append(hdr, "Authorization", a)
			}
			wantStatus(t, f.do(http.MethodPost, tt.path, jsonCT, changed, hdr...), tt.want)
			if tt.want == http.StatusOK {
				wantStored(t, f.store, 1, 1)
			} else {
				wantStored(t, f.store, 0, 0)
				if got := f.lastOutcomes(); len(got) != 1 || got[0] != OutcomeUnauthorized {
					t.Errorf("outcomes %v", got)
				}
			}
		})
	}
}

func TestHandlerDuplicate(t *testing.T) {
	f := newFixture(t, nil)
	form := "event=check.changed&data[check_id]=" + chk + "&data[status]=printed"
	wantStatus(t, f.do(http.MethodPost, hookPath, jsonCT, changed), http.StatusOK)
	w := f.do(http.MethodPost, hookPath, jsonCT, changed)
	wantStatus(t, w, http.StatusOK)
	wantStatus(t, f.do(http.MethodPost, hookPath, formCT, form), http.StatusOK)
	wantStored(t, f.store, 1, 3)
	if got := f.lastOutcomes(); strings.Join(got, ",") != "recorded,duplicate,duplicate" {
		t.Errorf("outcomes %v", got)
	}
	// A real change of the same check is a new event.
	wantStatus(t, f.do(http.MethodPost, hookPath, formCT, strings.Replace(form, "printed", "deposited", 1)), http.StatusOK)
	wantStored(t, f.store, 2, 4)
}

func TestHandlerRecordFails(t *testing.T) {
	f := newFixture(t, nil)
	f.store.err = errors.New("disk full")
	w := f.do(http.MethodPost, hookPath, jsonCT, changed)
	wantStatus(t, w, http.StatusServiceUnavailable)
	if strings.Contains(w.Body.String(), "disk full") {
		t.Errorf("answer leaks the store's error: %q", w.Body.String())
	}
	wantStored(t, f.store, 0, 1)
	// The service's retry succeeds once the store is back.
	f.store.err = nil
	wantStatus(t, f.do(http.MethodPost, hookPath, jsonCT, changed), http.StatusOK)
	wantStored(t, f.store, 1, 2)
	if got := f.lastOutcomes(); strings.Join(got, ",") != "store_error,recorded" {
		t.Errorf("outcomes %v", got)
	}
}

func TestHandlerTooLarge(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxBodyBytes = 100 })
	big := `{"event":"check.changed","pad":"` + strings.Repeat("x", 200) + `"}`
	wantStatus(t, f.do(http.MethodPost, hookPath, jsonCT, big), http.StatusRequestEntityTooLarge)

	// Without a Content-Length the bound is found while reading.
	r := httptest.NewRequest(http.MethodPost, hookPath, io.MultiReader(strings.NewReader(big)))
	r.ContentLength = -1
	r.Header.Set("Content-Type", jsonCT)
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	wantStatus(t, w, http.StatusRequestEntityTooLarge)
	wantStored(t, f.store, 0, 0)
	if got := f.lastOutcomes(); strings.Join(got, ",") != "too_large,too_large" {
		t.Errorf("outcomes %v", got)
	}
	// At the bound exactly is fine.
	exact := `{"event":"check.changed","pad":"` + strings.Repeat("x", 100-len(`{"event":"check.changed","pad":""}`)) + `"}`
	wantStatus(t, f.do(http.MethodPost, hookPath, jsonCT, exact), http.StatusOK)
}

func TestHandlerDefaultMaxBody(t *testing.T) {
	f := newFixture(t, nil)
	big := `{"event":"check.changed","pad":"` + strings.Repeat("x", DefaultMaxBodyBytes) + `"}`
	wantStatus(t, f.do(http.MethodPost, hookPath, jsonCT, big), http.StatusRequestEntityTooLarge)
}

func TestHandlerRateLimit(t *testing.T) {
	// One token, refilled once a day: the second delivery is over the rate
	// whatever the test's speed.
	f := newFixture(t, func(o *Options) { o.Rate = rate.Every(24 * time.Hour); o.Burst = 1 })
	// Refused deliveries take no token.
	wantStatus(t, f.do(http.MethodPost, "/webhook/wrong-secret-0123456789abcdef", jsonCT, changed), http.StatusUnauthorized)
	wantStatus(t, f.do(http.MethodPost, hookPath, jsonCT, changed), http.StatusOK)
	w := f.do(http.MethodPost, hookPath, jsonCT, changed)
	wantStatus(t, w, http.StatusTooManyRequests)
	ra, err := strconv.Atoi(w.Header().Get("Retry-After"))
	if err != nil || ra < 1 || ra > 24*3600 {
		t.Errorf("Retry-After %q", w.Header().Get("Retry-After"))
	}
	wantStored(t, f.store, 1, 1)
	if got := f.lastOutcomes(); strings.Join(got, ",") != "unauthorized,recorded,rate_limited" {
		t.Errorf("outcomes %v", got)
	}
}

func TestHandlerMethodAndPath(t *testing.T) {
	f := newFixture(t, nil)
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodHead, http.MethodDelete} {
		w := f.do(m, hookPath, jsonCT, changed)
		wantStatus(t, w, http.StatusMethodNotAllowed)
		if w.Header().Get("Allow") != http.MethodPost {
			t.Errorf("%s: Allow %q", m, w.Header().Get("Allow"))
		}
	}
	for _, p := range []string{"/", "/other/" + testSecret, "/webhookx/" + testSecret, "/webhooks/" + testSecret, "/" + testSecret} {
		wantStatus(t, f.do(http.MethodPost, p, jsonCT, changed), http.StatusNotFound)
	}
	wantStored(t, f.store, 0, 0)
}

func TestHandlerUndecodable(t *testing.T) {
	f := newFixture(t, nil)
	for _, b := range []string{"", "{", `{"bank_account":"` + acct + `"}`, "[1]"} {
		wantStatus(t, f.do(http.MethodPost, hookPath, jsonCT, b), http.StatusBadRequest)
	}
	wantStatus(t, f.do(http.MethodPost, hookPath, "multipart/form-data; boundary=x", "--x--"), http.StatusBadRequest)
	wantStored(t, f.store, 0, 0)
}

func TestHandlerPathForms(t *testing.T) {
	for _, base := range []string{"/webhook/", "/hooks/echeck"} {
		f := newFixture(t, func(o *Options) { o.Path = base })
		p := strings.TrimRight(base, "/") + "/" + testSecret
		wantStatus(t, f.do(http.MethodPost, p, jsonCT, changed), http.StatusOK)
	}
}

func TestNewRejects(t *testing.T) {
	ok := Options{Secret: testSecret, Key: testKey, Path: "/webhook", Store: &memStore{}}
	for name, edit := range map[string]func(*Options){
		"short secret":    func(o *Options) { o.Secret = "short" },
		"slash in secret": func(o *Options) { o.Secret = "abc/defghijklmnopqrstu" },
		"space in secret": func(o *Options) { o.Secret = "abc defghijklmnopqrstu" },
		"no key":          func(o *Options) { o.Key = "" },
		"no store":        func(o *Options) { o.Store = nil },
		"relative path":   func(o *Options) { o.Path = "webhook" },
		"negative body":   func(o *Options) { o.MaxBodyBytes = -1 },
		"negative rate":   func(o *Options) { o.Rate = -1 },
	} {
		o := ok
		edit(&o)
		_, err := New(o)
		if err == nil {
			t.Errorf("%s: New accepted", name)
			continue
		}
		if strings.Contains(err.Error(), o.Secret) || strings.Contains(err.Error(), testKey) {
			t.Errorf("%s: error names a secret: %v", name, err)
		}
	}
	if _, err := New(ok); err != nil {
		t.Errorf("New: %v", err)
	}
}

func TestNewServerTimeouts(t *testing.T) {
	s := NewServer(":0", http.NotFoundHandler())
	if s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout <= 0 || s.IdleTimeout <= 0 || s.MaxHeaderBytes <= 0 {
		t.Errorf("server without a bound: %+v", s)
	}
	if s.ReadTimeout <= DefaultBodyTimeout || s.WriteTimeout <= DefaultBodyTimeout+DefaultRecordTimeout {
		t.Error("server timeouts cut the handler's own bounds short")
	}
}

// startServer runs h behind NewServer's settings on a loopback port.
func startServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	cfg := NewServer("", h)
	srv.Config.ReadHeaderTimeout, srv.Config.ReadTimeout = cfg.ReadHeaderTimeout, cfg.ReadTimeout
	srv.Config.WriteTimeout, srv.Config.IdleTimeout = cfg.WriteTimeout, cfg.IdleTimeout
	srv.Config.MaxHeaderBytes = cfg.MaxHeaderBytes
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestServerEndToEnd(t *testing.T) {
	f := newFixture(t, nil)
	url := startServer(t, f.h)
	resp, err := http.Post(url+hookPath, formCT, strings.NewReader("event=funding-source.verified&source_id="+src))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	wantStored(t, f.store, 1, 1)
}

// A client that stops sending mid-body is cut off by the body deadline, and
// the Store never sees a partial delivery.
func TestServerSlowBody(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.BodyTimeout = 50 * time.Millisecond })
	url := startServer(t, f.h)
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A generous bound on the test itself; the server's deadline ends it.
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s",
		hookPath, jsonCT, len(changed), changed[:10])
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("status %d, want 408", resp.StatusCode)
		}
	} else {
		t.Logf("connection closed without an answer: %v", err) // also a cut-off
	}
	wantStored(t, f.store, 0, 0)
}

// Concurrent deliveries of one event are recorded once.
func TestHandlerConcurrent(t *testing.T) {
	f := newFixture(t, nil)
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w := f.do(http.MethodPost, hookPath, jsonCT, changed); w.Code != http.StatusOK {
				t.Errorf("status %d", w.Code)
			}
		}()
	}
	wg.Wait()
	wantStored(t, f.store, 1, 16)
}
