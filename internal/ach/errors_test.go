package ach

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/funding"
)

var allKinds = []error{ErrAuth, ErrNotFound, ErrCustomerNotFound, ErrNotOwner, funding.ErrDeprecated,
	funding.ErrInvalidToken, ErrAccountSubtype, funding.ErrAccountTaken, ErrAlreadyLinked, funding.ErrTooManySources,
	ErrEmailTaken, ErrNotVerified, ErrNotInitiated, ErrWrongAmounts, ErrTooManyAttempts, ErrThrottled}

// TestClassification sends every error answer of the contract through
// the client and checks the class and exactly the sentinels it is.
func TestClassification(t *testing.T) {
	env := func(msg string) string { return `{"success":false,"error":true,"message":"` + msg + `"}` }
	cases := []struct {
		name   string
		status int
		body   string
		class  apiwire.Class
		kinds  []error
	}{
		{"missing key", 403, env("API key is missing in Authorization header"), apiwire.Fatal, []error{ErrAuth}},
		{"invalid key", 403, env("Access key invalid"), apiwire.Fatal, []error{ErrAuth}},
		{"app inactive", 403, env("App inactive"), apiwire.Fatal, []error{ErrAuth}},
		{"401 of the spec", 401, `{"error":true,"message":"no valid key"}`, apiwire.Fatal, []error{ErrAuth}},
		{"customer not found", 404, env("Customer not found"), apiwire.Permanent, []error{ErrCustomerNotFound, ErrNotFound}},
		{"not the owner", 404, env("You are not the owner of the customer"), apiwire.Permanent, []error{ErrNotOwner, ErrNotFound}},
		{"source not found", 404, env("Funding source not found"), apiwire.Permanent, []error{ErrNotFound}},
		{"bank account not found", 404, env("Bank account not found"), apiwire.Permanent, []error{ErrNotFound}},
		{"unknown endpoint", 404, env("no such endpoint"), apiwire.Permanent, nil},
		{"processor token by code", 400, `{"success":false,"error":true,"code":"INVALID_PROCESSOR_TOKEN","message":"INVALID_PROCESSOR_TOKEN: token was revoked"}`,
			apiwire.Permanent, []error{funding.ErrInvalidToken}},
		{"processor token code only", 400, `{"error":true,"code":"invalid_processor_token","message":"bad token"}`, apiwire.Permanent, []error{funding.ErrInvalidToken}},
		{"processor token message only", 400, env("INVALID_PROCESSOR_TOKEN"), apiwire.Permanent, []error{funding.ErrInvalidToken}},
		{"subtype", 400, env("Only checking and savings accounts are accepted"), apiwire.Permanent, []error{ErrAccountSubtype}},
		{"too many sources", 400, env("You exceeded the maximum number of bank accounts"), apiwire.Permanent, []error{funding.ErrTooManySources}},
		{"account taken", 400, env("This bank account is associated with another user"), apiwire.Permanent, []error{funding.ErrAccountTaken}},
		{"account taken 409", 409, env("This bank account is associated with another user."), apiwire.Permanent, []error{funding.ErrAccountTaken}},
		{"already linked", 400, env("This bank account is already linked to this customer"), apiwire.Permanent, []error{ErrAlreadyLinked}},
		{"email taken", 400, env("A customer with this email already exists"), apiwire.Permanent, []error{ErrEmailTaken}},
		{"deprecated", 410, env("Micro-deposit verification is deprecated since 2026-06-08; use the bank-linking provider's verification (processor token) instead"),
			apiwire.Permanent, []error{funding.ErrDeprecated}},
		{"not initiated", 400, env("Verification has not been initiated for this funding source"), apiwire.Permanent, []error{ErrNotInitiated}},
		{"wrong amounts", 400, env("The amounts do not match the micro-deposits (2 attempts left)"), apiwire.Permanent, []error{ErrWrongAmounts}},
		{"last attempt spent", 400, env("The amounts do not match the micro-deposits (0 attempts left)"), apiwire.Permanent, []error{ErrWrongAmounts, ErrTooManyAttempts}},
		{"too many attempts", 400, env("Too many failed verification attempts"), apiwire.Permanent, []error{ErrTooManyAttempts}},
		{"not verified", 402, env("Funding source is not verified for debits"), apiwire.Permanent, []error{ErrNotVerified}},
		{"402 in other words", 402, env("Parameters valid but the request failed"), apiwire.Permanent, []error{ErrNotVerified}},
		{"field", 400, env("routing_number must be 9 digits"), apiwire.Permanent, nil},
		{"rate limit", 429, env("rate limit exceeded"), apiwire.Retryable, []error{ErrThrottled}},
		{"500 on a create", 500, env("sandbox: injected error"), apiwire.Ambiguous, nil},
		{"503 naming a customer", 503, env("Customer not found"), apiwire.Ambiguous, nil},
		{"messages list", 400, `{"success":false,"messages":["You exceeded the maximum number of bank accounts"]}`, apiwire.Permanent, []error{funding.ErrTooManySources}},
		{"messages object", 400, `{"success":false,"messages":{"account_number":["is associated with another user"]}}`, apiwire.Permanent, []error{funding.ErrAccountTaken}},
		{"error string", 404, `{"success":false,"error":"Customer not found"}`, apiwire.Permanent, []error{ErrCustomerNotFound, ErrNotFound}},
		{"2xx saying no", 200, `{"success":false,"message":"This bank account is associated with another user"}`, apiwire.Permanent, []error{funding.ErrAccountTaken}},
		{"2xx saying no with the object", 200, `{"success":false,"message":"odd","funding_source":{"source_id":"s"}}`, apiwire.Ambiguous, nil},
		{"not json", 502, `<html>Bad gateway</html>`, apiwire.Ambiguous, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := fakeService(t, reply(tc.status, tc.body))
			c := newTestClient(t, srv.URL)
			_, err := c.CreateFundingSource(context.Background(),
				FundingSourceRequest{UserID: testUser, Routing: testRouting, Account: testAccount, Type: Checking})
			e := asError(t, err)
			if e.Class != tc.class || apiwire.ClassOf(err) != tc.class {
				t.Errorf("class %s, want %s (%v)", e.Class, tc.class, err)
			}
			if e.Status != tc.status {
				t.Errorf("status %d, want %d", e.Status, tc.status)
			}
			for _, k := range allKinds {
				want := false
				for _, w := range tc.kinds {
					want = want || w == k
				}
				if got := errors.Is(err, k); got != want {
					t.Errorf("errors.Is(%v) = %v, want %v (%v)", k, got, want, err)
				}
			}
			if e.Message == "" {
				t.Errorf("no message")
			}
		})
	}
}

func TestClassOnOtherCalls(t *testing.T) {
	srv, _ := fakeService(t, reply(500, `{"error":true,"message":"sandbox: injected error"}`))
	c := newTestClient(t, srv.URL)
	ctx := context.Background()
	_, err := c.GetUser(ctx, testUser)
	if apiwire.ClassOf(err) != apiwire.Retryable {
		t.Errorf("get on 500: %v, want Retryable", err)
	}
	if err := c.RemoveFundingSource(ctx, testUser, testSource); apiwire.ClassOf(err) != apiwire.Retryable {
		t.Errorf("remove on 500: %v, want Retryable", err)
	}
	for name, call := range map[string]func() error{
		"debit":    func() error { _, err := c.Debit(ctx, TransferRequest{SourceID: testSource, Amount: 1}); return err },
		"credit":   func() error { _, err := c.Credit(ctx, TransferRequest{SourceID: testSource, Amount: 1}); return err },
		"verify":   func() error { _, err := c.Verify(ctx, testSource, 1, 2); return err },
		"initiate": func() error { _, err := c.InitiateVerification(ctx, testSource); return err },
		"user":     func() error { _, err := c.CreateUser(ctx, UserRequest{}); return err },
		"token":    func() error { _, err := c.CreateProcessorFundingSource(ctx, "plaid", testUser, testToken); return err },
	} {
		if apiwire.ClassOf(call()) != apiwire.Ambiguous {
			t.Errorf("%s on 500: want Ambiguous", name)
		}
	}
}

func TestEmailTakenNamesTheCustomer(t *testing.T) {
	for _, body := range []string{
		`{"success":false,"error":true,"message":"A customer with this email already exists","user_id":"u-existing"}`,
		`{"success":false,"error":true,"message":"A customer with this email already exists","user":{"user_id":"u-existing"}}`,
		`{"success":false,"error":true,"message":"A customer with this email already exists","customer_id":"u-existing"}`,
	} {
		srv, _ := fakeService(t, reply(400, body))
		_, err := newTestClient(t, srv.URL).CreateUser(context.Background(), UserRequest{Email: "a@b"})
		var e *apiwire.Error
		if !errors.As(err, &e) || !errors.Is(err, ErrEmailTaken) || UserIDOf(err) != "u-existing" {
			t.Errorf("%s: %v (UserID %q), want ErrEmailTaken naming u-existing", body, err, UserIDOf(err))
		}
	}
}

func TestRetryAfterPausesTheLimiter(t *testing.T) {
	srv, _ := fakeService(t, func(w http.ResponseWriter, r *http.Request, b []byte) {
		w.Header().Set("Retry-After", "3")
		reply(429, `{"error":true,"message":"rate limit exceeded"}`)(w, r, b)
	})
	lim := &fakeLimiter{}
	c := newTestClient(t, srv.URL, func(o *apiwire.Options) { o.Limiter = lim })
	_, err := c.ListUsers(context.Background(), 0, 0)
	e := asError(t, err)
	if e.RetryAfter != 3*time.Second || e.RetryDelay() != 3*time.Second || e.Class != apiwire.Retryable {
		t.Errorf("%v: RetryAfter %s", err, e.RetryAfter)
	}
	if lim.throttled.Load() != 1 || len(lim.pauses) != 1 || lim.pauses[0] != 3*time.Second {
		t.Errorf("limiter: throttled %d pauses %v", lim.throttled.Load(), lim.pauses)
	}
	if !strings.Contains(err.Error(), "retry after 3s") {
		t.Errorf("error text %q lacks the delay", err)
	}
}

func TestAnswerLostAfterSend(t *testing.T) {
	srv, rec := fakeService(t, hangUp)
	c := newTestClient(t, srv.URL)
	ctx := context.Background()
	src := FundingSourceRequest{UserID: testUser, Routing: testRouting, Account: testAccount, Type: Checking}
	for name, call := range map[string]func() error{
		"create user":   func() error { _, err := c.CreateUser(ctx, UserRequest{}); return err },
		"create source": func() error { _, err := c.CreateFundingSource(ctx, src); return err },
		"on demand":     func() error { _, err := c.CreateOnDemandFundingSource(ctx, src); return err },
		"processor":     func() error { _, err := c.CreateProcessorFundingSource(ctx, "plaid", testUser, testToken); return err },
		"debit":         func() error { _, err := c.Debit(ctx, TransferRequest{SourceID: testSource, Amount: 1}); return err },
		"credit":        func() error { _, err := c.Credit(ctx, TransferRequest{SourceID: testSource, Amount: 1}); return err },
		"verify":        func() error { _, err := c.Verify(ctx, testSource, 1, 2); return err },
	} {
		err := call()
		if e := asError(t, err); e.Class != apiwire.Ambiguous || e.Status != 0 || e.Err == nil {
			t.Errorf("%s: %v, want Ambiguous network error", name, err)
		}
	}
	for name, call := range map[string]func() error{
		"remove":   func() error { return c.RemoveFundingSource(ctx, testUser, testSource) },
		"webhook":  func() error { _, err := c.RegisterWebhook(ctx, "https://x.example/h"); return err },
		"get user": func() error { _, err := c.GetUser(ctx, testUser); return err },
	} {
		if err := call(); apiwire.ClassOf(err) != apiwire.Retryable {
			t.Errorf("%s: %v, want Retryable", name, err)
		}
	}
	posts := 0
	for _, r := range rec.all() {
		if r.Method == "POST" {
			posts++
		}
	}
	if posts != 9 {
		t.Errorf("service saw %d POSTs, want exactly 9 (one per call, never replayed)", posts)
	}
}

func TestCallerCancelAfterSendIsAmbiguous(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv, _ := fakeService(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		arrived <- struct{}{}
		<-r.Context().Done()
	})
	c := newTestClient(t, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Debit(ctx, TransferRequest{SourceID: testSource, Amount: 100})
		errc <- err
	}()
	<-arrived
	cancel()
	err := <-errc
	if e := asError(t, err); e.Class != apiwire.Ambiguous || !errors.Is(err, context.Canceled) {
		t.Errorf("debit canceled after send: %v, want Ambiguous wrapping Canceled", err)
	}
}

func TestNotSentIsRetryable(t *testing.T) {
	c := newTestClient(t, closedAddr(t))
	_, err := c.Debit(context.Background(), TransferRequest{SourceID: testSource, Amount: 1})
	if e := asError(t, err); e.Class != apiwire.Retryable || e.Status != 0 {
		t.Errorf("debit to a closed port: %v, want Retryable", err)
	}
	srv, rec := fakeService(t, okAnswers)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = newTestClient(t, srv.URL).Debit(ctx, TransferRequest{SourceID: testSource, Amount: 1})
	if e := asError(t, err); e.Class != apiwire.Retryable || !errors.Is(err, context.Canceled) {
		t.Errorf("debit with a canceled context: %v, want Retryable wrapping Canceled", err)
	}
	if n := len(rec.all()); n != 0 {
		t.Errorf("%d requests reached the service", n)
	}
}

func TestClassOf(t *testing.T) {
	if apiwire.ClassOf(nil) != 0 || apiwire.ClassOf(context.Canceled) != apiwire.Retryable || apiwire.ClassOf(errors.New("x")) != apiwire.Ambiguous {
		t.Error("ClassOf of plain errors")
	}
	wrapped := &url.Error{Op: "Get", URL: "u", Err: &apiwire.Error{Class: apiwire.Fatal}}
	if apiwire.ClassOf(wrapped) != apiwire.Fatal {
		t.Error("ClassOf through a wrapper")
	}
	for c, s := range map[apiwire.Class]string{apiwire.Retryable: "retryable", apiwire.Ambiguous: "ambiguous", apiwire.Permanent: "permanent", apiwire.Fatal: "fatal", 9: "Class(9)"} {
		if c.String() != s {
			t.Errorf("%d.String() = %q", c, c.String())
		}
	}
}

func TestMessageExcerpt(t *testing.T) {
	long := strings.Repeat("é", 300)
	msg, _, _ := apiMessage([]byte(`{"message":"`+long+`"}`), 400)
	if len(msg) > apiwire.MaxExcerpt+len("…") || !strings.HasSuffix(msg, "…") || strings.ContainsRune(msg, '\uFFFD') {
		t.Errorf("excerpt of %d bytes: %q", len(msg), msg)
	}
	msg, _, _ = apiMessage([]byte("line one\n\tline two\x00"), 502)
	if msg != "line one line two" {
		t.Errorf("non-JSON body excerpt %q", msg)
	}
	msg, _, _ = apiMessage(nil, 503)
	if msg != "Service Unavailable" {
		t.Errorf("empty body message %q", msg)
	}
	msg, _, _ = apiMessage([]byte(`{"error":true}`), 400)
	if msg != "Bad Request" {
		t.Errorf("error:true message %q", msg)
	}
}
