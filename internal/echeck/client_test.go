package echeck

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
)

func TestNewBaseURL(t *testing.T) {
	cases := []struct {
		url string
		ok  bool
	}{
		{"https://sandbox.example", true},
		{"https://anything.example:8443/api/", true},
		{"http://127.0.0.1:8080", true},
		{"http://127.5.6.7:1", true},
		{"http://[::1]:9000", true},
		{"http://localhost:8080", true},
		{"http://LocalHost", true},
		{"http://example.com", false},
		{"http://10.0.0.1:80", false},
		{"http://localhost.example.com", false},
		{"ftp://127.0.0.1", false},
		{"", false},
		{"sandbox.example", false},
		{"https://", false},
		{"https://user:pw@sandbox.example", false},
		{"https://sandbox.example/?key=x", false},
		{"https://sandbox.example/#frag", false},
	}
	for _, c := range cases {
		_, err := New(apiwire.Options{BaseURL: c.url, Key: testKey})
		if (err == nil) != c.ok {
			t.Errorf("New(%q): err = %v, want ok = %v", c.url, err, c.ok)
		}
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	for name, opts := range map[string]apiwire.Options{
		"no key":           {BaseURL: "https://x.example"},
		"key with space":   {BaseURL: "https://x.example", Key: testKey + " x"},
		"key with newline": {BaseURL: "https://x.example", Key: testKey + "\n"},
		"negative timeout": {BaseURL: "https://x.example", Key: testKey, Timeout: -time.Second},
	} {
		_, err := New(opts)
		if err == nil {
			t.Errorf("%s: New succeeded", name)
			continue
		}
		if strings.Contains(err.Error(), testKey) {
			t.Errorf("%s: error shows the key: %v", name, err)
		}
	}
}

// okAnswers answers every endpoint successfully, in the shapes of
// public-api-notes.md.
func okAnswers(w http.ResponseWriter, r *http.Request, _ []byte) {
	w.Header().Set("Content-Type", "application/json")
	p := r.URL.Path
	switch {
	case p == "/v1/check/list":
		w.Write([]byte(`{"success":true,"list":{"current_page":"1","last_page":"1","per_page":"15","total":"1","data":[` + checkJSON("12.34", `"1001"`) + `]}}`))
	case p == "/v1/check/bankinfo":
		w.Write([]byte(`{"success":true,"bank_name":"Test Bank","bank_routing":"999900001"}`))
	case p == "/v1/account/tokenization":
		w.Write([]byte(`{"success":true,"tokenization":{"token":"` + testToken + `","bank":"Test Bank","routing":"999900001","last4":"0016","name":"Ann Lee"}}`))
	case p == "/v1/paymentlink/create":
		w.Write([]byte(`{"success":true,"checkout_link":{"checkout_token":"` + testToken + `","link":"https://pay.example/` + testToken + `","amount":5,"memo":"dues"}}`))
	case p == "/v1/paymentlink/list":
		w.Write([]byte(`{"success":true,"list":{"current_page":1,"last_page":1,"per_page":15,"total":1,"data":[{"checkout_token":"` + testToken + `","amount":"5.00"}]}}`))
	case r.Method == http.MethodDelete:
		w.Write([]byte(`{"success":true}`))
	default: // create, get, edit
		w.Write([]byte(`{"success":true,"error":false,"message":"ok","check":` + checkJSON("12.34", `"1001"`) + `}`))
	}
}

func TestEndpointsSendExactRequests(t *testing.T) {
	srv, rec := fakeService(t, okAnswers)
	c := newTestClient(t, srv.URL)
	ctx := context.Background()
	zero := 0
	full := CheckRequest{
		Number: "1001", Amount: 1234, Memo: "rent", Name: "Ann Lee", Email: "ann@example.com",
		Label: "batch-7-row-3", BankAccount: testAccount, BankRouting: testRouting,
		Recurring: true, RecurringCycle: "month", RecurringInstallments: &zero, VerifyBeforeSave: true,
	}
	const fullBody = `{"amount":12.34,"bank_account":"1111000016","bank_routing":"999900001",` +
		`"email":"ann@example.com","label":"batch-7-row-3","memo":"rent","name":"Ann Lee","number":"1001",` +
		`"recurring":1,"recurring_cycle":"month","recurring_installments":0,"verify_before_save":true}`
	cases := []struct {
		name   string
		call   func() error
		method string
		path   string
		query  string
		body   string // canonical JSON; "" means no body
	}{
		{"create", func() error { _, err := c.CreateCheck(ctx, full); return err },
			"POST", "/v1/check/create", "", fullBody},
		{"create minimal", func() error {
			_, err := c.CreateCheck(ctx, CheckRequest{Amount: 1, Memo: "m", Name: "n", Token: testToken, Store: "shop"})
			return err
		}, "POST", "/v1/check/create", "", `{"amount":0.01,"memo":"m","name":"n","store":"shop","token":"` + testToken + `"}`},
		{"list", func() error {
			_, err := c.ListChecks(ctx, ListParams{Limit: 50, Page: 2, Sort: "date", Direction: "ASC",
				FromDate: "2026-11-01", ToDate: "2026-11-30", Label: "batch-7", LinkID: "L1"})
			return err
		}, "GET", "/v1/check/list",
			"direction=ASC&from_date=2026-11-01&label=batch-7&limit=50&link_id=L1&page=2&sort=date&to_date=2026-11-30", ""},
		{"list defaults", func() error { _, err := c.ListChecks(ctx, ListParams{}); return err },
			"GET", "/v1/check/list", "", ""},
		{"get", func() error { _, err := c.GetCheck(ctx, testID); return err },
			"GET", "/v1/check/" + testID, "", ""},
		{"bankinfo", func() error { _, err := c.BankInfo(ctx, testRouting); return err },
			"GET", "/v1/check/bankinfo", "bank_routing=999900001", ""},
		{"edit", func() error {
			_, err := c.EditCheck(ctx, testID, CheckRequest{Number: "1001", Amount: 29, Memo: "m", Name: "n", BankAccount: testAccount, BankRouting: testRouting})
			return err
		},
			"POST", "/v1/check/edit", "",
			`{"amount":0.29,"bank_account":"1111000016","bank_routing":"999900001","check_id":"` + testID + `","memo":"m","name":"n","number":"1001"}`},
		{"delete", func() error { return c.DeleteCheck(ctx, testID) },
			"DELETE", "/v1/check/" + testID, "", ""},
		{"tokenize", func() error {
			_, err := c.Tokenize(ctx, TokenizeRequest{FirstName: "Ann", LastName: "Lee", BankAccount: testAccount, BankRouting: testRouting, Store: "shop"})
			return err
		}, "POST", "/v1/account/tokenization", "",
			`{"bank_account":"1111000016","bank_routing":"999900001","first_name":"Ann","last_name":"Lee","store":"shop"}`},
		{"paymentlink create", func() error {
			_, err := c.CreatePaymentLink(ctx, PaymentLinkRequest{Amount: 500, Memo: "dues", ThankYouURL: "https://shop.example/ok", SignatureRequired: true})
			return err
		}, "POST", "/v1/paymentlink/create", "",
			`{"amount":5.00,"memo":"dues","signature_required":true,"thank_you_url":"https://shop.example/ok"}`},
		{"paymentlink list", func() error { _, err := c.ListPaymentLinks(ctx, ListParams{Limit: 10, Page: 1}); return err },
			"GET", "/v1/paymentlink/list", "limit=10&page=1", ""},
		{"paymentlink changestatus", func() error { return c.ChangePaymentLinkStatus(ctx, testToken) },
			"DELETE", "/v1/paymentlink/changestatus/" + testToken, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); err != nil {
				t.Fatalf("call: %v", err)
			}
			r := rec.last(t)
			if r.Method != tc.method || r.Path != tc.path || r.Query != tc.query {
				t.Errorf("sent %s %s?%s, want %s %s?%s", r.Method, r.Path, r.Query, tc.method, tc.path, tc.query)
			}
			if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
				t.Errorf("Authorization = %q", got)
			}
			if got := r.Header.Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type = %q", got)
			}
			if tc.body == "" {
				if len(r.Body) != 0 {
					t.Errorf("body = %s, want none", r.Body)
				}
				return
			}
			if got := canonJSON(t, r.Body); got != tc.body {
				t.Errorf("body\n got %s\nwant %s", got, tc.body)
			}
		})
	}
}

func TestInvalidInputIsNotSent(t *testing.T) {
	srv, rec := fakeService(t, okAnswers)
	c := newTestClient(t, srv.URL)
	ctx := context.Background()
	calls := map[string]func() error{
		"zero amount":      func() error { _, err := c.CreateCheck(ctx, CheckRequest{Memo: "m"}); return err },
		"path in id":       func() error { _, err := c.GetCheck(ctx, "../admin"); return err },
		"empty id":         func() error { return c.DeleteCheck(ctx, "") },
		"slash in token":   func() error { return c.ChangePaymentLinkStatus(ctx, "a/b") },
		"bad routing":      func() error { _, err := c.BankInfo(ctx, "12345"); return err },
		"bad date":         func() error { _, err := c.ListChecks(ctx, ListParams{FromDate: "11/01/2026"}); return err },
		"filter for links": func() error { _, err := c.ListPaymentLinks(ctx, ListParams{Label: "x"}); return err },
		"edit zero amount": func() error { _, err := c.EditCheck(ctx, testID, CheckRequest{}); return err },
	}
	for name, call := range calls {
		err := call()
		if e := asError(t, err); e.Class != apiwire.Permanent || e.Status != 0 {
			t.Errorf("%s: %v, want Permanent without status", name, err)
		}
	}
	if n := len(rec.all()); n != 0 {
		t.Errorf("%d requests reached the service", n)
	}
}

func TestLimiterAndObserve(t *testing.T) {
	srv, _ := fakeService(t, func(w http.ResponseWriter, r *http.Request, b []byte) {
		if r.URL.Path == "/v1/check/"+testID {
			reply(404, `{"error":true,"message":"Check not found"}`)(w, r, b)
			return
		}
		okAnswers(w, r, b)
	})
	lim := &fakeLimiter{}
	type obs struct {
		endpoint string
		status   int
	}
	var mu sync.Mutex
	var got []obs
	c := newTestClient(t, srv.URL, func(o *apiwire.Options) {
		o.Limiter = lim
		o.Observe = func(e string, s int, d time.Duration) {
			if d < 0 {
				t.Errorf("negative duration %s", d)
			}
			mu.Lock()
			got = append(got, obs{e, s})
			mu.Unlock()
		}
	})
	ctx := context.Background()
	if _, err := c.CreateCheck(ctx, CheckRequest{Amount: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetCheck(ctx, testID); err == nil {
		t.Fatal("GetCheck of a missing check succeeded")
	}
	if _, err := c.ListChecks(ctx, ListParams{}); err != nil {
		t.Fatal(err)
	}
	dead := newTestClient(t, closedAddr(t), func(o *apiwire.Options) {
		o.Limiter = lim
		o.Observe = func(e string, s int, _ time.Duration) { mu.Lock(); got = append(got, obs{e, s}); mu.Unlock() }
	})
	if _, err := dead.CreateCheck(ctx, CheckRequest{Amount: 100}); err == nil {
		t.Fatal("create against nothing succeeded")
	}
	want := []obs{{OpCheckCreate, 200}, {OpCheckGet, 404}, {OpCheckList, 200}, {OpCheckCreate, 0}}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("observed %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("observation %d = %v, want %v", i, got[i], want[i])
		}
	}
	if n := lim.waits.Load(); n != 4 {
		t.Errorf("limiter waited %d times, want 4", n)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	srv, rec := fakeService(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.URL.Path == "/elsewhere" {
			t.Errorf("redirect was followed")
		}
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	c := newTestClient(t, srv.URL)
	_, err := c.CreateCheck(context.Background(), CheckRequest{Amount: 100})
	if e := asError(t, err); e.Class != apiwire.Ambiguous || e.Status != 307 {
		t.Errorf("create redirected: %v, want Ambiguous 307", err)
	}
	_, err = c.GetCheck(context.Background(), testID)
	if e := asError(t, err); e.Class != apiwire.Permanent || e.Status != 307 {
		t.Errorf("get redirected: %v, want Permanent 307", err)
	}
	if n := len(rec.all()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestLogsCarryNoKey(t *testing.T) {
	srv, _ := fakeService(t, okAnswers)
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newTestClient(t, srv.URL, func(o *apiwire.Options) { o.Logger = log })
	if _, err := c.CreateCheck(context.Background(), CheckRequest{Amount: 100, BankAccount: testAccount}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	out := buf.String()
	if !strings.Contains(out, "op=check.create") || !strings.Contains(out, "status=200") {
		t.Errorf("log line missing: %s", out)
	}
	if strings.Contains(out, testKey) || strings.Contains(out, testAccount) {
		t.Errorf("log shows a secret: %s", out)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestHTTP2 runs the client over TLS with HTTP/2, whose transport reports
// the end of a write from another goroutine than HTTP/1's: a create whose
// stream is reset, or canceled, after it was sent must still be Ambiguous.
func TestHTTP2(t *testing.T) {
	arrived := make(chan struct{}, 1)
	var proto atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(r.Proto)
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.URL.Path == "/v1/check/create" && strings.Contains(string(body), `"memo":"reset"`):
			panic(http.ErrAbortHandler) // resets the stream: the answer is lost
		case r.URL.Path == "/v1/check/create" && strings.Contains(string(body), `"memo":"hang"`):
			arrived <- struct{}{}
			<-r.Context().Done()
		default:
			okAnswers(w, r, body)
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL, func(o *apiwire.Options) { o.HTTPClient = srv.Client() })
	ctx := context.Background()
	if _, err := c.GetCheck(ctx, testID); err != nil {
		t.Fatalf("get over HTTP/2: %v", err)
	}
	if p, _ := proto.Load().(string); p != "HTTP/2.0" {
		t.Fatalf("protocol %q, want HTTP/2.0", p)
	}
	if _, err := c.CreateCheck(ctx, CheckRequest{Amount: 100, Memo: "reset"}); apiwire.ClassOf(err) != apiwire.Ambiguous {
		t.Errorf("create with its stream reset: %v, want Ambiguous", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.CreateCheck(cctx, CheckRequest{Amount: 100, Memo: "hang"})
		errc <- err
	}()
	<-arrived
	cancel()
	if err := <-errc; apiwire.ClassOf(err) != apiwire.Ambiguous {
		t.Errorf("create canceled after send: %v, want Ambiguous", err)
	}
}
