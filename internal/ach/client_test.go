package ach

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/throttle"
)

// The one limiter batchd builds serves both clients: *throttle.Limiter is
// an apiwire.Limiter, with the optional Pause.
var (
	_ apiwire.Limiter                   = (*throttle.Limiter)(nil)
	_ interface{ Pause(time.Duration) } = (*throttle.Limiter)(nil)
)

func TestNewBaseURL(t *testing.T) {
	cases := []struct {
		url string
		ok  bool
	}{
		{"https://sandbox.example", true},
		{"https://anything.example:8443/api/", true},
		{"http://127.0.0.1:8080", true},
		{"http://[::1]:9000", true},
		{"http://localhost:8080", true},
		{"http://example.com", false},
		{"http://10.0.0.1:80", false},
		{"http://localhost.example.com", false},
		{"ftp://127.0.0.1", false},
		{"", false},
		{"sandbox.example", false},
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

// TestEndpointsSendExactRequests pins every endpoint's method, path,
// query and body to the contract.
func TestEndpointsSendExactRequests(t *testing.T) {
	srv, rec := fakeService(t, okAnswers)
	c := newTestClient(t, srv.URL+"/prefix/")
	ctx := context.Background()
	src := FundingSourceRequest{UserID: testUser, Routing: testRouting, Account: testAccount, Type: Checking, Nickname: "rent"}
	srcBody := `{"account_number":"` + testAccount + `","account_type":"checking","nickname":"rent","routing_number":"999900001","user_id":"` + testUser + `"}`
	cases := []struct {
		name   string
		call   func() error
		method string
		path   string // below /prefix/ach/v2
		query  string
		body   string // canonical JSON; "" means no body
	}{
		{"create user", func() error {
			_, err := c.CreateUser(ctx, UserRequest{FirstName: "Ann", LastName: "Lee", Email: "ann@example.com", Phone: "5550100"})
			return err
		}, "POST", "/user", "", `{"email":"ann@example.com","firstName":"Ann","lastName":"Lee","phone":"5550100"}`},
		{"create user without phone", func() error {
			_, err := c.CreateUser(ctx, UserRequest{FirstName: "Ann", LastName: "Lee", Email: "ann@example.com"})
			return err
		}, "POST", "/user", "", `{"email":"ann@example.com","firstName":"Ann","lastName":"Lee"}`},
		{"get user", func() error { _, err := c.GetUser(ctx, testUser); return err },
			"GET", "/user/:" + testUser, "", ""},
		{"list users", func() error { _, err := c.ListUsers(ctx, 2, 50); return err },
			"GET", "/user", "limit=50&page=2", ""},
		{"list users defaults", func() error { _, err := c.ListUsers(ctx, 0, 0); return err },
			"GET", "/user", "", ""},
		{"create source", func() error { _, err := c.CreateFundingSource(ctx, src); return err },
			"POST", "/funding-source", "", srcBody},
		{"create on demand", func() error { _, err := c.CreateOnDemandFundingSource(ctx, src); return err },
			"POST", "/on-demand/funding-source", "", srcBody},
		{"create on demand without type", func() error {
			_, err := c.CreateOnDemandFundingSource(ctx, FundingSourceRequest{UserID: testUser, Routing: testRouting, Account: testAccount})
			return err
		}, "POST", "/on-demand/funding-source", "",
			`{"account_number":"` + testAccount + `","routing_number":"999900001","user_id":"` + testUser + `"}`},
		{"create processor", func() error { _, err := c.CreateProcessorFundingSource(ctx, "plaid", testUser, testToken); return err },
			"POST", "/funding-source/processor/plaid", "", `{"processor_token":"` + testToken + `","user_id":"` + testUser + `"}`},
		{"list sources", func() error { _, err := c.ListFundingSources(ctx, testUser); return err },
			"GET", "/funding-source/user/:" + testUser, "", ""},
		{"get source", func() error { _, err := c.GetFundingSource(ctx, testSource); return err },
			"GET", "/funding-source/:" + testSource, "", ""},
		{"remove source", func() error { return c.RemoveFundingSource(ctx, testUser, testSource) },
			"POST", "/funding-source/remove", "", `{"source_id":"` + testSource + `","user_id":"` + testUser + `"}`},
		{"initiate", func() error { _, err := c.InitiateVerification(ctx, testSource); return err },
			"POST", "/funding-source/initiate/verification", "", `{"funding_source_id":"` + testSource + `"}`},
		{"verify", func() error { _, err := c.Verify(ctx, testSource, 7, 15); return err },
			"POST", "/funding-source/verify", "", `{"amounts":[0.07,0.15],"funding_source_id":"` + testSource + `"}`},
		{"account available", func() error { _, err := c.AccountAvailable(ctx, testRouting, testAccount); return err },
			"GET", "/accounts", "account_number=" + testAccount + "&routing_number=999900001", ""},
		{"delete account", func() error { return c.DeleteAccount(ctx, testRouting, testAccount) },
			"POST", "/accounts/delete", "", `{"account_number":"` + testAccount + `","routing_number":"999900001"}`},
		{"debit", func() error {
			_, err := c.Debit(ctx, TransferRequest{SourceID: testSource, Name: "Ann Lee", Amount: 2500, Description: "rent", Label: "b7-r3"})
			return err
		}, "POST", "/ach-debit", "", `{"amount":"25.00","description":"rent","label":"b7-r3","name":"Ann Lee","sender":"` + testSource + `"}`},
		{"credit", func() error {
			_, err := c.Credit(ctx, TransferRequest{SourceID: testSource, Amount: 29})
			return err
		}, "POST", "/check/send", "", `{"amount":"0.29","recipient":"` + testSource + `"}`},
		{"register webhook", func() error { _, err := c.RegisterWebhook(ctx, "https://batchd.example/hook"); return err },
			"POST", "/webhooks", "", `{"url":"https://batchd.example/hook"}`},
		{"webhook", func() error { _, err := c.Webhook(ctx); return err },
			"GET", "/webhooks", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); err != nil {
				t.Fatalf("call: %v", err)
			}
			r := rec.last(t)
			if want := "/prefix/ach/v2" + tc.path; r.Method != tc.method || r.Path != want || r.Query != tc.query {
				t.Errorf("sent %s %s?%s, want %s %s?%s", r.Method, r.Path, r.Query, tc.method, want, tc.query)
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
	good := FundingSourceRequest{UserID: testUser, Routing: testRouting, Account: testAccount, Type: Checking}
	with := func(f func(*FundingSourceRequest)) FundingSourceRequest { r := good; f(&r); return r }
	calls := map[string]func() error{
		"path in user id": func() error { _, err := c.GetUser(ctx, "../admin"); return err },
		"empty user id":   func() error { _, err := c.ListFundingSources(ctx, ""); return err },
		"slash in source": func() error { _, err := c.GetFundingSource(ctx, "a/b"); return err },
		"negative page":   func() error { _, err := c.ListUsers(ctx, -1, 0); return err },
		"short routing": func() error {
			_, err := c.CreateFundingSource(ctx, with(func(r *FundingSourceRequest) { r.Routing = "12345" }))
			return err
		},
		"letters in acct": func() error {
			_, err := c.CreateFundingSource(ctx, with(func(r *FundingSourceRequest) { r.Account = "12ab34" }))
			return err
		},
		"long account": func() error {
			_, err := c.CreateOnDemandFundingSource(ctx, with(func(r *FundingSourceRequest) { r.Account += "1234" }))
			return err
		},
		"no type": func() error {
			_, err := c.CreateFundingSource(ctx, with(func(r *FundingSourceRequest) { r.Type = "" }))
			return err
		},
		"no user": func() error {
			_, err := c.CreateFundingSource(ctx, with(func(r *FundingSourceRequest) { r.UserID = "" }))
			return err
		},
		"provider path":     func() error { _, err := c.CreateProcessorFundingSource(ctx, "../x", testUser, testToken); return err },
		"provider case":     func() error { _, err := c.CreateProcessorFundingSource(ctx, "Plaid", testUser, testToken); return err },
		"empty token":       func() error { _, err := c.CreateProcessorFundingSource(ctx, "plaid", testUser, " "); return err },
		"zero amount":       func() error { _, err := c.Verify(ctx, testSource, 0, 15); return err },
		"bad initiate id":   func() error { _, err := c.InitiateVerification(ctx, ""); return err },
		"availability acct": func() error { _, err := c.AccountAvailable(ctx, testRouting, "123"); return err },
		"delete routing":    func() error { return c.DeleteAccount(ctx, "1", testAccount) },
		"debit zero":        func() error { _, err := c.Debit(ctx, TransferRequest{SourceID: testSource}); return err },
		"credit no source":  func() error { _, err := c.Credit(ctx, TransferRequest{Amount: 1}); return err },
		"relative webhook":  func() error { _, err := c.RegisterWebhook(ctx, "/hook"); return err },
		"remove no source":  func() error { return c.RemoveFundingSource(ctx, testUser, "") },
	}
	for name, call := range calls {
		err := call()
		if e := asError(t, err); e.Class != apiwire.Permanent || e.Status != 0 {
			t.Errorf("%s: %v, want Permanent without status", name, err)
		}
		if strings.Contains(err.Error(), testAccount) || strings.Contains(err.Error(), testToken) {
			t.Errorf("%s: refusal shows a secret: %v", name, err)
		}
	}
	if n := len(rec.all()); n != 0 {
		t.Errorf("%d requests reached the service", n)
	}
}

func TestLimiterAndObserve(t *testing.T) {
	srv, _ := fakeService(t, func(w http.ResponseWriter, r *http.Request, b []byte) {
		if strings.HasPrefix(r.URL.Path, "/ach/v2/user/") {
			reply(404, `{"success":false,"error":true,"message":"Customer not found"}`)(w, r, b)
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
	observe := func(e string, s int, d time.Duration) {
		if d < 0 {
			t.Errorf("negative duration %s", d)
		}
		mu.Lock()
		got = append(got, obs{e, s})
		mu.Unlock()
	}
	c := newTestClient(t, srv.URL, func(o *apiwire.Options) { o.Limiter, o.Observe = lim, observe })
	ctx := context.Background()
	if _, err := c.CreateUser(ctx, UserRequest{FirstName: "A", LastName: "B", Email: "a@b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetUser(ctx, testUser); err == nil {
		t.Fatal("GetUser of a missing customer succeeded")
	}
	if _, err := c.GetUser(ctx, "a/b"); err == nil { // refused: neither waits nor is observed
		t.Fatal("GetUser of a bad id succeeded")
	}
	dead := newTestClient(t, closedAddr(t), func(o *apiwire.Options) { o.Limiter, o.Observe = lim, observe })
	if _, err := dead.Debit(ctx, TransferRequest{SourceID: testSource, Amount: 1}); err == nil {
		t.Fatal("debit against nothing succeeded")
	}
	want := []obs{{OpUserCreate, 200}, {OpUserGet, 404}, {OpDebit, 0}}
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
	if n := lim.waits.Load(); n != 3 {
		t.Errorf("limiter waited %d times, want 3", n)
	}
}

// TestSharedThrottleLimiter runs both clients on one *throttle.Limiter: a
// 429 seen by the ACH client pauses the eCheck client's calls too.
func TestSharedThrottleLimiter(t *testing.T) {
	srv, _ := fakeService(t, reply(429, `{"error":true,"message":"rate limit exceeded"}`))
	lim := throttle.New(1000, 10)
	a := newTestClient(t, srv.URL, func(o *apiwire.Options) { o.Limiter = lim })
	if _, err := echeck.New(apiwire.Options{BaseURL: srv.URL, Key: testKey, Limiter: lim}); err != nil {
		t.Fatal(err)
	}
	before := lim.Rate()
	_, err := a.Webhook(context.Background())
	if !errorsIs(err, ErrThrottled) || apiwire.ClassOf(err) != apiwire.Retryable {
		t.Fatalf("429: %v, want ErrThrottled and Retryable", err)
	}
	if after := lim.Rate(); after >= before {
		t.Errorf("shared limiter rate %v after a 429, was %v: Throttled not called", after, before)
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
	_, err := c.Debit(context.Background(), TransferRequest{SourceID: testSource, Amount: 100})
	if e := asError(t, err); e.Class != apiwire.Ambiguous || e.Status != 307 {
		t.Errorf("debit redirected: %v, want Ambiguous 307", err)
	}
	_, err = c.GetFundingSource(context.Background(), testSource)
	if e := asError(t, err); e.Class != apiwire.Permanent || e.Status != 307 {
		t.Errorf("get redirected: %v, want Permanent 307", err)
	}
	if n := len(rec.all()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestLogsCarryNoSecret(t *testing.T) {
	srv, _ := fakeService(t, okAnswers)
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newTestClient(t, srv.URL, func(o *apiwire.Options) { o.Logger = log })
	ctx := context.Background()
	if _, err := c.AccountAvailable(ctx, testRouting, testAccount); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateProcessorFundingSource(ctx, "plaid", testUser, testToken); err != nil {
		t.Fatal(err)
	}
	req := FundingSourceRequest{UserID: testUser, Routing: testRouting, Account: testAccount, Type: Checking}
	log.Info("linking", "request", req) // a caller logging its request
	mu.Lock()
	defer mu.Unlock()
	out := buf.String()
	if !strings.Contains(out, "op="+OpAccountAvailable) || !strings.Contains(out, "status=200") {
		t.Errorf("log line missing: %s", out)
	}
	for _, secret := range []string{testKey, testAccount, testToken} {
		if strings.Contains(out, secret) {
			t.Errorf("log shows %q: %s", secret, out)
		}
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

func TestOpsAreLabels(t *testing.T) {
	seen := map[string]bool{}
	for _, op := range Ops {
		if seen[op] || !strings.HasPrefix(op, "ach.") || strings.ContainsAny(op, " /:{}") {
			t.Errorf("op %q is repeated or not a clean label", op)
		}
		seen[op] = true
	}
	if len(Ops) != 17 {
		t.Errorf("%d ops, want 17", len(Ops))
	}
}
