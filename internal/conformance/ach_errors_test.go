package conformance

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ach"
	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/sandbox"
)

// achOp is one call of an ACH client method, with well-formed arguments.
type achOp struct {
	name string
	call func(ctx context.Context, c *ach.Client) error
}

// everyACHOp calls every endpoint of the contract once; user and source
// are identifiers to use where one is needed.
func everyACHOp(user, source, token string) []achOp {
	src := sourceReq(user, freshAccount())
	return []achOp{
		{"create user", func(ctx context.Context, c *ach.Client) error {
			_, err := c.CreateUser(ctx, ach.UserRequest{FirstName: "A", LastName: "B", Email: "every@example.com"})
			return err
		}},
		{"get user", func(ctx context.Context, c *ach.Client) error { _, err := c.GetUser(ctx, user); return err }},
		{"list users", func(ctx context.Context, c *ach.Client) error { _, err := c.ListUsers(ctx, 0, 0); return err }},
		{"create source", func(ctx context.Context, c *ach.Client) error { _, err := c.CreateFundingSource(ctx, src); return err }},
		{"on demand", func(ctx context.Context, c *ach.Client) error {
			_, err := c.CreateOnDemandFundingSource(ctx, src)
			return err
		}},
		{"processor", func(ctx context.Context, c *ach.Client) error {
			_, err := c.CreateProcessorFundingSource(ctx, "plaid", user, token)
			return err
		}},
		{"list sources", func(ctx context.Context, c *ach.Client) error { _, err := c.ListFundingSources(ctx, user); return err }},
		{"get source", func(ctx context.Context, c *ach.Client) error { _, err := c.GetFundingSource(ctx, source); return err }},
		{"remove source", func(ctx context.Context, c *ach.Client) error { return c.RemoveFundingSource(ctx, user, source) }},
		{"initiate", func(ctx context.Context, c *ach.Client) error {
			_, err := c.InitiateVerification(ctx, source)
			return err
		}},
		{"verify", func(ctx context.Context, c *ach.Client) error { _, err := c.Verify(ctx, source, 7, 15); return err }},
		{"available", func(ctx context.Context, c *ach.Client) error {
			_, err := c.AccountAvailable(ctx, fixtureRouting, src.Account)
			return err
		}},
		{"delete account", func(ctx context.Context, c *ach.Client) error {
			return c.DeleteAccount(ctx, fixtureRouting, src.Account)
		}},
		{"debit", func(ctx context.Context, c *ach.Client) error {
			_, err := c.Debit(ctx, ach.TransferRequest{SourceID: source, Amount: 100})
			return err
		}},
		{"credit", func(ctx context.Context, c *ach.Client) error {
			_, err := c.Credit(ctx, ach.TransferRequest{SourceID: source, Amount: 100})
			return err
		}},
		{"register webhook", func(ctx context.Context, c *ach.Client) error {
			_, err := c.RegisterWebhook(ctx, "https://batchd.example/hook")
			return err
		}},
		{"webhook", func(ctx context.Context, c *ach.Client) error { _, err := c.Webhook(ctx); return err }},
	}
}

// TestACHAuth checks spec 7's 403s on every endpoint: an invalid key (an
// unknown one, a live one, one without the test prefix) and a key whose
// application is inactive are ErrAuth and Fatal, with the key nowhere in
// the error; a missing key is answered by the sandbox (the client cannot
// send one).
func TestACHAuth(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{})
		owner := e.achClient(keyA)
		u := newCustomer(t, owner)
		s := newPending(t, owner, u.ID, freshAccount())
		tok := e.issueToken(keyA, "", "", freshAccount(), "")
		before := e.sb.Stats()
		keys := []struct{ name, key, msg string }{
			{"unknown test key", "sk_test_notAKeyOfThisSandbox", "Access key invalid"},
			{"live key", "sk_live_abcdef0123456789", "Access key invalid"},
			{"no prefix", "abcdef0123456789", "Access key invalid"},
			{"app inactive", inactiveKey(), "App inactive"},
		}
		for _, k := range keys {
			c := e.achClient(k.key)
			for _, op := range everyACHOp(u.ID, s.ID, tok) {
				t.Run(k.name+"/"+op.name, func(t *testing.T) {
					err := op.call(t.Context(), c)
					ae := achErr(t, err, http.StatusForbidden, apiwire.Fatal, ach.ErrAuth)
					if ae.Message != k.msg {
						t.Errorf("message %q, want %q", ae.Message, k.msg)
					}
					if strings.Contains(err.Error(), k.key) {
						t.Errorf("error text shows the key: %v", err)
					}
				})
			}
		}
		if after := e.sb.Stats(); after.Customers != before.Customers || after.FundingSources != before.FundingSources {
			t.Errorf("refused requests left state: %+v, was %+v", after, before)
		}
		if _, err := owner.GetFundingSource(t.Context(), s.ID); err != nil {
			t.Errorf("the owner's source after the refusals: %v", err)
		}

		t.Run("raw", func(t *testing.T) {
			for _, h := range []struct{ name, value, msg string }{
				{"no Authorization", "", "API key is missing in Authorization header"},
				{"Bearer without key", "Bearer ", "API key is missing in Authorization header"},
				{"wrong key", "Bearer sk_test_wrong", "Access key invalid"},
				{"live key", "Bearer sk_live_abc", "Access key invalid"},
				{"inactive", "Bearer " + inactiveKey(), "App inactive"},
			} {
				t.Run(h.name, func(t *testing.T) {
					for _, path := range []string{"/user", "/webhooks", "/funding-source/:" + s.ID} {
						achRawErr(t, e.achRaw(http.MethodGet, path, keyA, nil, authHeader(h.value)), http.StatusForbidden, h.msg)
					}
					achRawErr(t, e.achRaw(http.MethodPost, "/_sandbox/processor/token", keyA,
						map[string]any{"processor": "svcach", "routing_number": fixtureRouting, "account_number": "12345678"},
						authHeader(h.value)), http.StatusForbidden, h.msg)
				})
			}
		})
	})
}

// TestACHCustomerErrors checks spec 7's two 404s on every call that names
// a customer: an unknown user_id is ErrCustomerNotFound, another key's
// customer ErrNotOwner, both ErrNotFound; and another key's funding
// source is not found.
func TestACHCustomerErrors(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{})
		a, b := e.achClient(keyA), e.achClient(keyB)
		ctx := t.Context()
		theirs := newCustomer(t, b)
		theirSource := newPending(t, b, theirs.ID, freshAccount())
		mine := newCustomer(t, a)
		mySource := newPending(t, a, mine.ID, freshAccount())
		calls := []struct {
			name string
			call func(user string) error
		}{
			{"get user", func(user string) error { _, err := a.GetUser(ctx, user); return err }},
			{"create source", func(user string) error {
				_, err := a.CreateFundingSource(ctx, sourceReq(user, freshAccount()))
				return err
			}},
			{"on demand", func(user string) error {
				_, err := a.CreateOnDemandFundingSource(ctx, sourceReq(user, freshAccount()))
				return err
			}},
			{"processor", func(user string) error {
				_, err := a.CreateProcessorFundingSource(ctx, "plaid", user, e.issueToken(keyA, "", "", freshAccount(), ""))
				return err
			}},
			{"list sources", func(user string) error { _, err := a.ListFundingSources(ctx, user); return err }},
			{"remove source", func(user string) error { return a.RemoveFundingSource(ctx, user, mySource.ID) }},
		}
		for _, tc := range calls {
			t.Run(tc.name, func(t *testing.T) {
				ae := achErr(t, tc.call(unknownID), http.StatusNotFound, apiwire.Permanent, ach.ErrCustomerNotFound, ach.ErrNotFound)
				if ae.Message != "Customer not found" {
					t.Errorf("unknown customer: message %q", ae.Message)
				}
				ae = achErr(t, tc.call(theirs.ID), http.StatusNotFound, apiwire.Permanent, ach.ErrNotOwner, ach.ErrNotFound)
				if ae.Message != "You are not the owner of the customer" {
					t.Errorf("another key's customer: message %q", ae.Message)
				}
				if errors.Is(ae, ach.ErrCustomerNotFound) {
					t.Errorf("another key's customer is also ErrCustomerNotFound")
				}
			})
		}
		wantSourceStatus(t, a, mySource.ID, ach.StatusPending)
		for name, call := range map[string]func() error{
			"get":      func() error { _, err := a.GetFundingSource(ctx, theirSource.ID); return err },
			"initiate": func() error { _, err := a.InitiateVerification(ctx, theirSource.ID); return err },
			"verify":   func() error { _, err := a.Verify(ctx, theirSource.ID, 1, 2); return err },
			"remove":   func() error { return a.RemoveFundingSource(ctx, mine.ID, theirSource.ID) },
			"unknown":  func() error { _, err := a.GetFundingSource(ctx, unknownID); return err },
		} {
			ae := achErr(t, call(), http.StatusNotFound, apiwire.Permanent, ach.ErrNotFound)
			if ae.Message != "Funding source not found" {
				t.Errorf("%s: message %q", name, ae.Message)
			}
		}
		wantSourceStatus(t, b, theirSource.ID, ach.StatusPending)
	})
}

// TestACHProcessorTokenErrors checks spec 7's INVALID_PROCESSOR_TOKEN for
// each reason (another processor, the production environment, a revoked,
// unknown or already exchanged token), the subtype rule, and that the
// token never shows in an error.
func TestACHProcessorTokenErrors(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{})
		c := e.achClient(keyA)
		ctx := t.Context()
		u := newCustomer(t, c)
		used := e.issueToken(keyA, "", "", freshAccount(), "")
		if _, err := c.CreateProcessorFundingSource(ctx, "plaid", u.ID, used); err != nil {
			t.Fatalf("first exchange: %v", err)
		}
		revoked := e.issueToken(keyA, "", "", freshAccount(), "")
		e.revokeToken(keyA, revoked)
		cases := []struct{ name, token string }{
			{"other processor", e.issueToken(keyA, "someoneelse", "", freshAccount(), "")},
			{"production environment", e.issueToken(keyA, "", "production", freshAccount(), "")},
			{"revoked", revoked},
			{"unknown", "processor-sandbox-" + unknownID},
			{"already exchanged", used},
			{"another key's", e.issueToken(keyB, "", "", freshAccount(), "")},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := c.CreateProcessorFundingSource(ctx, "plaid", u.ID, tc.token)
				ae := achErr(t, err, http.StatusBadRequest, apiwire.Permanent, funding.ErrInvalidToken)
				if ae.Code != "INVALID_PROCESSOR_TOKEN" || !strings.HasPrefix(ae.Message, "INVALID_PROCESSOR_TOKEN: ") {
					t.Errorf("code %q message %q", ae.Code, ae.Message)
				}
				if strings.Contains(err.Error(), tc.token) {
					t.Errorf("error shows the token: %v", err)
				}
			})
		}
		for _, subtype := range []string{"cd", "money market"} {
			_, err := c.CreateProcessorFundingSource(ctx, "plaid", u.ID, e.issueToken(keyA, "", "", freshAccount(), subtype))
			ae := achErr(t, err, http.StatusBadRequest, apiwire.Permanent, ach.ErrAccountSubtype)
			if ae.Message != "Only checking and savings accounts are accepted" {
				t.Errorf("subtype %s: message %q", subtype, ae.Message)
			}
		}
		if l := listSources(t, c, u.ID); len(l) != 1 {
			t.Errorf("refused tokens left sources: %+v", l)
		}
	})
}

// TestACHTooManySources checks spec 7's funding source limit with
// Options.MaxFundingSources: deleted sources do not count.
func TestACHTooManySources(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{MaxFundingSources: 2})
		c := e.achClient(keyA)
		ctx := t.Context()
		u := newCustomer(t, c)
		first := newPending(t, c, u.ID, freshAccount())
		if _, err := c.CreateOnDemandFundingSource(ctx, sourceReq(u.ID, freshAccount())); err != nil {
			t.Fatalf("second source: %v", err)
		}
		for name, call := range map[string]func() error{
			"create": func() error { _, err := c.CreateFundingSource(ctx, sourceReq(u.ID, freshAccount())); return err },
			"on demand": func() error {
				_, err := c.CreateOnDemandFundingSource(ctx, sourceReq(u.ID, freshAccount()))
				return err
			},
			"processor": func() error {
				_, err := c.CreateProcessorFundingSource(ctx, "plaid", u.ID, e.issueToken(keyA, "", "", freshAccount(), ""))
				return err
			},
		} {
			ae := achErr(t, call(), http.StatusBadRequest, apiwire.Permanent, funding.ErrTooManySources)
			if ae.Message != "You exceeded the maximum number of bank accounts" {
				t.Errorf("%s: message %q", name, ae.Message)
			}
		}
		if err := c.RemoveFundingSource(ctx, u.ID, first.ID); err != nil {
			t.Fatalf("RemoveFundingSource: %v", err)
		}
		if _, err := c.CreateFundingSource(ctx, sourceReq(u.ID, freshAccount())); err != nil {
			t.Errorf("a source after one was removed: %v", err)
		}
		other := newCustomer(t, c)
		for range 2 {
			newPending(t, c, other.ID, freshAccount())
		}

		t.Run("default five", func(t *testing.T) {
			e := newACHEnv(t, m, sandbox.Options{})
			c := e.achClient(keyA)
			u := newCustomer(t, c)
			for range 5 {
				newPending(t, c, u.ID, freshAccount())
			}
			_, err := c.CreateFundingSource(t.Context(), sourceReq(u.ID, freshAccount()))
			achErr(t, err, http.StatusBadRequest, apiwire.Permanent, funding.ErrTooManySources)
		})
	})
}

// TestACHAccountTaken checks spec 2.5's one customer per account, across
// keys: another customer gets "associated with another user" (decided:
// 400), the same customer "already linked", and DeleteAccount frees the
// account. No error shows the account number whole.
func TestACHAccountTaken(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{})
		a, b := e.achClient(keyA), e.achClient(keyB)
		ctx := t.Context()
		acct := freshAccount()
		owner := newCustomer(t, a)
		newPending(t, a, owner.ID, acct)
		sameKey, otherKey := newCustomer(t, a), newCustomer(t, b)
		for name, call := range map[string]func() error{
			"same key":  func() error { _, err := a.CreateFundingSource(ctx, sourceReq(sameKey.ID, acct)); return err },
			"other key": func() error { _, err := b.CreateFundingSource(ctx, sourceReq(otherKey.ID, acct)); return err },
			"on demand": func() error { _, err := b.CreateOnDemandFundingSource(ctx, sourceReq(otherKey.ID, acct)); return err },
			"by processor": func() error {
				_, err := b.CreateProcessorFundingSource(ctx, "plaid", otherKey.ID, e.issueToken(keyB, "", "", acct, ""))
				return err
			},
		} {
			err := call()
			ae := achErr(t, err, http.StatusBadRequest, apiwire.Permanent, funding.ErrAccountTaken)
			if ae.Message != "This bank account is associated with another user" {
				t.Errorf("%s: message %q", name, ae.Message)
			}
			noFullAccount(t, err.Error(), acct)
		}
		_, err := a.CreateFundingSource(ctx, sourceReq(owner.ID, acct))
		achErr(t, err, http.StatusBadRequest, apiwire.Permanent, ach.ErrAlreadyLinked)
		noFullAccount(t, err.Error(), acct)

		if err := a.DeleteAccount(ctx, fixtureRouting, acct); err != nil {
			t.Fatalf("DeleteAccount: %v", err)
		}
		if _, err := b.CreateFundingSource(ctx, sourceReq(otherKey.ID, acct)); err != nil {
			t.Fatalf("the freed account for another key's customer: %v", err)
		}
		if av, err := b.AccountAvailable(ctx, fixtureRouting, acct); err != nil || av.Available || av.UserID != otherKey.ID {
			t.Errorf("availability after the move: %+v %v", av, err)
		}
		// The same account number at another bank is another account.
		if _, err := a.CreateFundingSource(ctx, ach.FundingSourceRequest{UserID: owner.ID, Routing: "021000021", Account: acct, Type: ach.Checking}); err != nil {
			t.Errorf("same number at another routing number: %v", err)
		}
	})
}

// TestACHFieldErrors checks field rules at the sandbox where the client
// refuses first (it never sends them), and where the client leaves them
// to the service.
func TestACHFieldErrors(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{})
		c := e.achClient(keyA)
		ctx := t.Context()
		u := newCustomer(t, c)
		before := e.requests()
		for name, req := range map[string]ach.FundingSourceRequest{
			"short routing":  {UserID: u.ID, Routing: "12345", Account: freshAccount(), Type: ach.Checking},
			"short account":  {UserID: u.ID, Routing: fixtureRouting, Account: "123", Type: ach.Checking},
			"long account":   {UserID: u.ID, Routing: fixtureRouting, Account: strings.Repeat("1", 18), Type: ach.Checking},
			"letters":        {UserID: u.ID, Routing: fixtureRouting, Account: "12ab5678", Type: ach.Checking},
			"no type":        {UserID: u.ID, Routing: fixtureRouting, Account: freshAccount()},
			"no customer id": {Routing: fixtureRouting, Account: freshAccount(), Type: ach.Checking},
		} {
			_, err := c.CreateFundingSource(ctx, req)
			var ae *apiwire.Error
			if !errors.As(err, &ae) || ae.Status != 0 || ae.Class != apiwire.Permanent {
				t.Errorf("%s: %v, want the client's refusal", name, err)
			}
		}
		if n := e.requests() - before; n != 0 {
			t.Errorf("the client refused, yet the sandbox received %d request(s)", n)
		}
		for _, tc := range []struct {
			body map[string]any
			msg  string
		}{
			{map[string]any{"user_id": u.ID, "routing_number": "12345", "account_number": freshAccount(), "account_type": "checking"}, "routing_number must be 9 digits"},
			{map[string]any{"user_id": u.ID, "routing_number": fixtureRouting, "account_number": "123", "account_type": "checking"}, ""},
			{map[string]any{"user_id": u.ID, "routing_number": fixtureRouting, "account_number": freshAccount()}, ""},
			{map[string]any{"user_id": u.ID, "routing_number": fixtureRouting, "account_number": freshAccount(), "account_type": "brokerage"}, ""},
			{map[string]any{"routing_number": fixtureRouting, "account_number": freshAccount(), "account_type": "checking"}, ""},
		} {
			r := e.achRaw(http.MethodPost, "/funding-source", keyA, tc.body)
			achRawErr(t, r, http.StatusBadRequest, tc.msg)
		}
		_, err := c.CreateFundingSource(ctx, ach.FundingSourceRequest{UserID: u.ID, Routing: fixtureRouting, Account: freshAccount(), Type: "brokerage"})
		ae := achErr(t, err, http.StatusBadRequest, apiwire.Permanent)
		if !namesField(ae.Message, "account_type") {
			t.Errorf("account_type brokerage: message %q does not name account_type", ae.Message)
		}
		_, err = c.CreateFundingSource(ctx, ach.FundingSourceRequest{UserID: u.ID, Routing: fixtureRouting, Account: freshAccount(),
			Type: ach.Checking, Nickname: strings.Repeat("n", 129)})
		ae = achErr(t, err, http.StatusBadRequest, apiwire.Permanent)
		if !namesField(ae.Message, "nickname") {
			t.Errorf("long nickname: message %q does not name nickname", ae.Message)
		}
		s := newPending(t, c, u.ID, freshAccount())
		if _, err := c.InitiateVerification(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		for _, body := range []map[string]any{
			{"funding_source_id": s.ID},
			{"funding_source_id": s.ID, "amounts": []any{0.07}},
			{"funding_source_id": s.ID, "amounts": []any{0.07, 0.125}},
			{"amounts": []any{0.07, 0.15}},
		} {
			achRawErr(t, e.achRaw(http.MethodPost, "/funding-source/verify", keyA, body), http.StatusBadRequest, "")
		}
		wantSourceStatus(t, c, s.ID, ach.StatusPending)
	})
}

// TestACHFaults checks that the sandbox's faults reach /ach/v2 as the
// contract says and that the client classifies them: 429 with
// Retry-After is ErrThrottled and Retryable; an injected 500/503 is
// Ambiguous on a create and Retryable on a read; a dropped create is
// Ambiguous, stored all the same, and found again by creating once more
// (ErrEmailTaken names the customer; ErrAlreadyLinked the account).
func TestACHFaults(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		t.Run("rate limit", func(t *testing.T) {
			e := newACHEnv(t, m, sandbox.Options{RateLimit: 1})
			c := e.achClient(keyA)
			if _, err := c.Webhook(t.Context()); err != nil {
				t.Fatalf("first call: %v", err)
			}
			_, err := c.Webhook(t.Context())
			ae := achErr(t, err, http.StatusTooManyRequests, apiwire.Retryable, ach.ErrThrottled)
			if ae.RetryAfter < time.Second || ae.Message != "rate limit exceeded" {
				t.Errorf("429: RetryAfter %s message %q", ae.RetryAfter, ae.Message)
			}
		})
		t.Run("injected errors", func(t *testing.T) {
			e := newACHEnv(t, m, sandbox.Options{ErrorRate: 1, Seed: 7})
			c := e.achClient(keyA)
			for range 4 {
				_, err := c.CreateUser(t.Context(), ach.UserRequest{FirstName: "A", LastName: "B", Email: "f@example.com"})
				var ae *apiwire.Error
				if !errors.As(err, &ae) || (ae.Status != 500 && ae.Status != 503) || ae.Class != apiwire.Ambiguous ||
					ae.Message != "sandbox: injected error" {
					t.Errorf("create under ErrorRate 1: %v, want Ambiguous 500/503 sandbox: injected error", err)
				}
				_, err = c.ListUsers(t.Context(), 0, 0)
				if apiwire.ClassOf(err) != apiwire.Retryable {
					t.Errorf("list under ErrorRate 1: %v, want Retryable", err)
				}
			}
			if st := e.sb.Stats(); st.Customers != 0 {
				t.Errorf("injected errors stored %d customers", st.Customers)
			}
			// Control endpoints are exempt from faults.
			e.issueToken(keyA, "", "", freshAccount(), "")
		})
		t.Run("dropped creates", func(t *testing.T) {
			e := newACHEnv(t, m, sandbox.Options{DropRate: 1})
			c := e.achClient(keyA)
			ctx := t.Context()
			req := ach.UserRequest{FirstName: "Drop", LastName: "Ped", Email: "drop@example.com"}
			_, err := c.CreateUser(ctx, req)
			achErr(t, err, 0, apiwire.Ambiguous)
			_, err = c.CreateUser(ctx, req)
			ae := achErr(t, err, http.StatusBadRequest, apiwire.Permanent, ach.ErrEmailTaken)
			if !uuidRE.MatchString(ach.UserIDOf(ae)) {
				t.Fatalf("ErrEmailTaken names customer %q", ach.UserIDOf(ae))
			}
			u, err := c.GetUser(ctx, ach.UserIDOf(ae))
			if err != nil || u.Email != req.Email {
				t.Fatalf("the dropped customer: %+v %v", u, err)
			}
			acct := freshAccount()
			_, err = c.CreateFundingSource(ctx, sourceReq(u.ID, acct))
			achErr(t, err, 0, apiwire.Ambiguous)
			_, err = c.CreateFundingSource(ctx, sourceReq(u.ID, acct))
			achErr(t, err, http.StatusBadRequest, apiwire.Permanent, ach.ErrAlreadyLinked)
			if l := listSources(t, c, u.ID); len(l) != 1 || l[0].Status != ach.StatusPending {
				t.Errorf("the dropped source: %+v", l)
			}
			if st := e.sb.Stats(); st.Drops != 2 || st.ACHCreates != 2 {
				t.Errorf("stats %+v, want 2 drops of 2 stored creates", st)
			}
			// Not a create: answered.
			if _, err := c.Webhook(ctx); err != nil {
				t.Errorf("webhook under DropRate 1: %v", err)
			}
		})
	})
}
