package conformance

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/sandbox"
)

// clientOp is one call of every client method, with the arguments of a
// well-formed request.
type clientOp struct {
	name string
	call func(ctx context.Context, c *echeck.Client) error
}

// everyOp calls every endpoint of spec 4.1 once. id and token are
// identifiers to use where one is needed.
func everyOp(id, token string) []clientOp {
	req := validRequest("every-op")
	edit := req
	edit.Number = "1001"
	return []clientOp{
		{"create", func(ctx context.Context, c *echeck.Client) error { _, err := c.CreateCheck(ctx, req); return err }},
		{"list", func(ctx context.Context, c *echeck.Client) error {
			_, err := c.ListChecks(ctx, echeck.ListParams{})
			return err
		}},
		{"get", func(ctx context.Context, c *echeck.Client) error { _, err := c.GetCheck(ctx, id); return err }},
		{"bankinfo", func(ctx context.Context, c *echeck.Client) error {
			_, err := c.BankInfo(ctx, fixtureRouting)
			return err
		}},
		{"edit", func(ctx context.Context, c *echeck.Client) error { _, err := c.EditCheck(ctx, id, edit); return err }},
		{"delete", func(ctx context.Context, c *echeck.Client) error { return c.DeleteCheck(ctx, id) }},
		{"tokenize", func(ctx context.Context, c *echeck.Client) error {
			_, err := c.Tokenize(ctx, echeck.TokenizeRequest{FirstName: "A", LastName: "B",
				BankAccount: account(16), BankRouting: fixtureRouting, Store: "s"})
			return err
		}},
		{"paymentlink create", func(ctx context.Context, c *echeck.Client) error {
			_, err := c.CreatePaymentLink(ctx, echeck.PaymentLinkRequest{Amount: 100})
			return err
		}},
		{"paymentlink list", func(ctx context.Context, c *echeck.Client) error {
			_, err := c.ListPaymentLinks(ctx, echeck.ListParams{})
			return err
		}},
		{"paymentlink changestatus", func(ctx context.Context, c *echeck.Client) error { return c.ChangePaymentLinkStatus(ctx, token) }},
	}
}

const unknownID = "00000000-0000-4000-8000-000000000000"

// TestUnauthorized: every endpoint answers 401 to a missing, wrong or live
// key (spec 5, 7), which the client classifies Fatal, and the key never
// shows in the error text.
func TestUnauthorized(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{Keys: []sandbox.Key{
			{Value: keyA, FundConfirmation: true},
			{Value: "sk_live_listedButLive", FundConfirmation: true},
		}})
		keys := []struct{ name, key string }{
			{"unknown test key", "sk_test_notAKeyOfThisSandbox"},
			{"live key", "sk_live_abcdef0123456789"},
			{"live key listed in Keys", "sk_live_listedButLive"},
			{"no prefix", "abcdef0123456789"},
			{"bare prefix", "sk_test_"},
		}
		for _, k := range keys {
			c := e.client(k.key)
			for _, op := range everyOp(unknownID, unknownID) {
				t.Run(k.name+"/"+op.name, func(t *testing.T) {
					err := op.call(t.Context(), c)
					ee := apiErr(t, err, http.StatusUnauthorized, apiwire.Fatal, "")
					if strings.Contains(ee.Error(), k.key) {
						t.Errorf("error text shows the key: %v", ee)
					}
				})
			}
		}
		if st := e.sb.KeyStats(keyA); st.Checks != 0 || st.Tokens != 0 || st.PaymentLinks != 0 {
			t.Errorf("refused requests left state: %+v", st)
		}

		t.Run("no key at the client", func(t *testing.T) {
			if _, err := echeck.New(apiwire.Options{BaseURL: e.url, Key: ""}); err == nil {
				t.Error("echeck.New accepted an empty key")
			}
		})
		t.Run("raw", func(t *testing.T) {
			for _, h := range []struct{ name, value string }{
				{"no Authorization", ""},
				{"Bearer without key", "Bearer "},
				{"Basic scheme", "Basic " + keyA},
				{"wrong key", "Bearer sk_test_wrong"},
				{"live key", "Bearer sk_live_abc"},
			} {
				t.Run(h.name, func(t *testing.T) {
					for _, path := range []string{"/v1/check/list", "/v1/paymentlink/list", "/_sandbox/clock"} {
						rawErr(t, e.raw(http.MethodGet, path, keyA, nil, authHeader(h.value)), http.StatusUnauthorized, "")
					}
				})
			}
			// Some public clients send the bare key without "Bearer".
			if r := e.raw(http.MethodGet, "/v1/check/list", "", nil, authHeader(keyA)); r.status != http.StatusOK {
				t.Errorf("bare key: HTTP %d %s, want 200", r.status, r.body)
			}
		})
	})
}

// TestFundConfirmationForbidden: a key whose plan lacks fund confirmation
// gets 403 (Fatal) when it asks for it, on create and on edit, and the
// check is not created; without it the same key works.
func TestFundConfirmationForbidden(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		c := e.client(keyBasic)
		ctx := t.Context()
		req := validRequest("basic-plan")
		req.FundConfirmation = true
		_, err := c.CreateCheck(ctx, req)
		ee := apiErr(t, err, http.StatusForbidden, apiwire.Fatal, "")
		if !strings.Contains(strings.ToLower(ee.Message), "fund confirmation") {
			t.Errorf("403 message %q does not mention fund confirmation", ee.Message)
		}
		if n := len(listByLabel(t, c, "basic-plan")); n != 0 {
			t.Fatalf("the refused create left %d checks", n)
		}

		req.FundConfirmation = false
		req.VerifyBeforeSave = true
		ch := create(t, c, req)
		if ch.BasicVerification == nil || ch.FundsConfirmation != nil {
			t.Errorf("basic plan check: verification %+v, funds %+v; want verification only", ch.BasicVerification, ch.FundsConfirmation)
		}
		edit := req
		edit.Number, edit.FundConfirmation = ch.Number, true
		_, err = c.EditCheck(ctx, ch.CheckID, edit)
		apiErr(t, err, http.StatusForbidden, apiwire.Fatal, "")
		if got := get(t, c, ch.CheckID); got.FundsConfirmation != nil {
			t.Errorf("refused edit added fund confirmation %+v", got.FundsConfirmation)
		}
	})
}

// TestNotFound: an unknown check or payment link, or one of another key,
// is 404 (Permanent) on every endpoint that takes an identifier, and the
// owner's check is untouched.
func TestNotFound(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		a, b := e.client(keyA), e.client(keyB)
		ctx := t.Context()
		mine := create(t, a, validRequest("mine"))
		link, err := a.CreatePaymentLink(ctx, echeck.PaymentLinkRequest{Amount: 500})
		if err != nil {
			t.Fatalf("CreatePaymentLink: %v", err)
		}
		edit := validRequest("theirs")
		edit.Number = "77"
		cases := []struct {
			name string
			c    *echeck.Client
			id   string
		}{
			{"unknown id", a, unknownID},
			{"another key's id", b, mine.CheckID},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := tc.c.GetCheck(ctx, tc.id)
				apiErr(t, err, http.StatusNotFound, apiwire.Permanent, "")
				_, err = tc.c.EditCheck(ctx, tc.id, edit)
				apiErr(t, err, http.StatusNotFound, apiwire.Permanent, "")
				err = tc.c.DeleteCheck(ctx, tc.id)
				apiErr(t, err, http.StatusNotFound, apiwire.Permanent, "")
			})
		}
		t.Run("check id of the wrong length", func(t *testing.T) {
			_, err := a.GetCheck(ctx, "abc")
			apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "check_id")
			err = a.DeleteCheck(ctx, mine.CheckID+"0")
			apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "check_id")
		})
		t.Run("another key's payment link", func(t *testing.T) {
			err := b.ChangePaymentLinkStatus(ctx, link.CheckoutToken)
			apiErr(t, err, http.StatusNotFound, apiwire.Permanent, "")
		})
		t.Run("another key's list", func(t *testing.T) {
			p, err := b.ListChecks(ctx, echeck.ListParams{})
			if err != nil {
				t.Fatalf("ListChecks: %v", err)
			}
			if p.Total != 0 || len(p.Checks) != 0 {
				t.Errorf("keyB lists %d checks (total %d), want none of keyA's", len(p.Checks), p.Total)
			}
			lp, err := b.ListPaymentLinks(ctx, echeck.ListParams{})
			if err != nil {
				t.Fatalf("ListPaymentLinks: %v", err)
			}
			if lp.Total != 0 || len(lp.Links) != 0 {
				t.Errorf("keyB lists %d payment links, want none of keyA's", len(lp.Links))
			}
		})
		sameCheck(t, get(t, a, mine.CheckID), *mine)
	})
}

// TestMethodNotAllowed: a wrong method on an endpoint is 405 (spec 7) with
// an Allow header naming the right ones, and changes nothing.
func TestMethodNotAllowed(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		ch := create(t, e.client(keyA), validRequest("405"))
		cases := []struct{ method, path, allow string }{
			{http.MethodGet, "/v1/check/create", "POST"},
			{http.MethodPut, "/v1/check/create", "POST"},
			{http.MethodPost, "/v1/check/list", "GET"},
			{http.MethodPost, "/v1/check/bankinfo", "GET"},
			{http.MethodGet, "/v1/check/edit", "POST"},
			{http.MethodPut, "/v1/check/" + ch.CheckID, "DELETE"},
			{http.MethodPost, "/v1/check/" + ch.CheckID, "GET"},
			{http.MethodPatch, "/v1/check/" + ch.CheckID, "DELETE"},
			{http.MethodGet, "/v1/account/tokenization", "POST"},
			{http.MethodDelete, "/v1/paymentlink/create", "POST"},
			{http.MethodPost, "/v1/paymentlink/list", "GET"},
			{http.MethodGet, "/v1/paymentlink/changestatus/" + unknownID, "DELETE"},
			{http.MethodPost, "/v1/paymentlink/changestatus/" + unknownID, "DELETE"},
		}
		for _, tc := range cases {
			t.Run(tc.method+" "+tc.path, func(t *testing.T) {
				r := e.raw(tc.method, tc.path, keyA, map[string]any{"amount": 1})
				rawErr(t, r, http.StatusMethodNotAllowed, "")
				if allow := r.header.Get("Allow"); !strings.Contains(allow, tc.allow) {
					t.Errorf("Allow %q, want it to list %s", allow, tc.allow)
				}
			})
		}
		if st := e.sb.KeyStats(keyA); st.Checks != 1 || st.ByStatus["in_process"] != 1 {
			t.Errorf("after 405s: %+v, want the one check still in_process", st)
		}
	})
}

// TestRateLimited: over the sandbox's per-key rate limit every endpoint is
// 429 with a Retry-After, which the client reports as Retryable with
// RetryAfter > 0, also for a create, and nothing is created. The clock is
// frozen, so the bucket never refills.
func TestRateLimited(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{RateLimit: 1})
		c := e.client(keyA)
		ctx := t.Context()
		first := create(t, c, validRequest("rate")) // the burst of one
		for _, op := range everyOp(first.CheckID, unknownID) {
			t.Run(op.name, func(t *testing.T) {
				ee := apiErr(t, op.call(ctx, c), http.StatusTooManyRequests, apiwire.Retryable, "")
				if ee.RetryAfter <= 0 {
					t.Errorf("RetryAfter %s, want > 0", ee.RetryAfter)
				}
			})
		}
		st := e.sb.KeyStats(keyA)
		if st.Checks != 1 || st.Tokens != 0 || st.PaymentLinks != 0 || st.ByStatus["in_process"] != 1 {
			t.Errorf("after 429s: %+v, want only the first check, in_process", st)
		}
		// Another key has its own bucket, and the control endpoints are exempt.
		if _, err := e.client(keyB).ListChecks(ctx, echeck.ListParams{}); err != nil {
			t.Errorf("keyB under keyA's limit: %v", err)
		}
		e.today(keyA)
		r := e.raw(http.MethodGet, "/v1/check/list", keyA, nil)
		rawErr(t, r, http.StatusTooManyRequests, "")
		if r.header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	})
}
