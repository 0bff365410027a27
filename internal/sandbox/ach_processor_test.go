package sandbox

import (
	"net/http"
	"strings"
	"testing"
)

func TestACHProcessorTokenExchange(t *testing.T) {
	h := newHarness(t, Options{})
	u := h.newUser(keyA)
	acct := newAccount()
	tok := h.token(keyA, acct, map[string]any{"subtype": "savings"})
	if !strings.HasPrefix(tok, "processor-sandbox-") || len(tok) != len("processor-sandbox-")+idLen {
		t.Fatalf("token %q", tok)
	}
	r := h.exchange(keyA, u, tok)
	wantStatus(t, r, http.StatusOK)
	fs := obj(r.body, "funding_source")
	if r.body["success"] != true || fs["status"] != "verified" || fs["is_primary"] != true || fs["type"] != "savings" ||
		fs["user_id"] != u || fs["lbacc"] != acct[len(acct)-4:] || fs["routing"] != FixtureRouting || len(str(fs, "source_id")) != idLen {
		t.Fatalf("exchange: %s", r.raw)
	}
	// The account is bound to the customer like any other.
	r = h.get(ach("/accounts?routing_number="+FixtureRouting+"&account_number="+acct), keyA)
	if r.body["user_id"] != u {
		t.Fatalf("/accounts after exchange: %s", r.raw)
	}
	// A token is exchanged once.
	wantTokenError(t, h.exchange(keyA, h.newUser(keyA), tok), "already exchanged")
}

// wantTokenError fails unless r is the INVALID_PROCESSOR_TOKEN 400 and
// its reason mentions reason.
func wantTokenError(t testing.TB, r resp, reason string) {
	t.Helper()
	wantStatus(t, r, http.StatusBadRequest)
	if r.body["code"] != "INVALID_PROCESSOR_TOKEN" || !strings.HasPrefix(r.msg(), "INVALID_PROCESSOR_TOKEN: ") ||
		!strings.Contains(r.msg(), reason) || r.body["success"] != false {
		t.Fatalf("want INVALID_PROCESSOR_TOKEN (%s), got %s", reason, r.raw)
	}
}

func TestACHInvalidProcessorTokens(t *testing.T) {
	h := newHarness(t, Options{})
	u := h.newUser(keyA)
	wantTokenError(t, h.exchange(keyA, u, h.token(keyA, newAccount(), map[string]any{"processor": "legacyach"})), "another processor")
	wantTokenError(t, h.exchange(keyA, u, h.token(keyA, newAccount(), map[string]any{"environment": "production"})), "production")
	wantTokenError(t, h.exchange(keyA, u, "processor-sandbox-00000000-0000-0000-0000-000000000000"), "unknown")
	wantTokenError(t, h.exchange(keyA, u, h.token(keyB, newAccount(), nil)), "unknown") // another key's token

	revoked := h.token(keyA, newAccount(), nil)
	wantStatus(t, h.post(ach("/_sandbox/processor/token/revoke"), keyA, map[string]any{"processor_token": revoked}), http.StatusOK)
	wantTokenError(t, h.exchange(keyA, u, revoked), "revoked")
	wantACHError(t, h.post(ach("/_sandbox/processor/token/revoke"), keyB, map[string]any{"processor_token": revoked}),
		http.StatusNotFound, "Processor token not found")

	for _, sub := range []string{"cd", "money market", "credit card"} {
		r := h.exchange(keyA, u, h.token(keyA, newAccount(), map[string]any{"subtype": sub}))
		wantACHError(t, r, http.StatusBadRequest, "Only checking and savings accounts are accepted")
	}
	// A refused token is not spent: the customer's checks come first.
	tok := h.token(keyA, newAccount(), nil)
	wantACHError(t, h.exchange(keyB, h.newUser(keyA), tok), http.StatusNotFound, "You are not the owner of the customer")
	wantACHError(t, h.exchange(keyA, "nope", tok), http.StatusNotFound, "Customer not found")
	wantACHField(t, h.post(ach("/funding-source/processor/plaid"), keyA, map[string]any{"user_id": u}), "processor_token")
	wantStatus(t, h.exchange(keyA, u, tok), http.StatusOK)
	if n := len(arr(h.get(ach("/funding-source/user/"+u), keyA).body, "list")); n != 1 {
		t.Fatalf("%d sources after refused exchanges, want 1", n)
	}
}

func TestACHLegacyProcessor(t *testing.T) {
	with := newHarness(t, Options{LegacyProcessor: "oldach"})
	u := with.newUser(keyA)
	wantStatus(t, with.exchange(keyA, u, with.token(keyA, newAccount(), map[string]any{"processor": "oldach"})), http.StatusOK)
	wantStatus(t, with.exchange(keyA, u, with.token(keyA, newAccount(), nil)), http.StatusOK)
	wantTokenError(t, with.exchange(keyA, u, with.token(keyA, newAccount(), map[string]any{"processor": "other"})), "another processor")

	without := newHarness(t, Options{})
	u = without.newUser(keyA)
	wantTokenError(t, without.exchange(keyA, u, without.token(keyA, newAccount(), map[string]any{"processor": "oldach"})), "another processor")
	for _, near := range []string{"svc-ach", "svc_ach", "SVCACH"} {
		wantTokenError(t, without.exchange(keyA, u, without.token(keyA, newAccount(), map[string]any{"processor": near})), "another processor")
	}
}

func TestACHIssueTokenValidation(t *testing.T) {
	h := newHarness(t, Options{})
	valid := func() map[string]any {
		return map[string]any{"processor": "svcach", "routing_number": FixtureRouting, "account_number": "12345"}
	}
	cases := []struct {
		field string
		value any
	}{
		{"processor", nil}, {"environment", "staging"}, {"routing_number", "1"}, {"account_number", nil}, {"subtype", strings.Repeat("s", 65)},
	}
	for _, tc := range cases {
		b := valid()
		if tc.value == nil {
			delete(b, tc.field)
		} else {
			b[tc.field] = tc.value
		}
		wantACHField(t, h.post(ach("/_sandbox/processor/token"), keyA, b), tc.field)
	}
	b := valid()
	b["environment"] = "production"
	if r := h.post(ach("/_sandbox/processor/token"), keyA, b); !strings.HasPrefix(str(r.body, "processor_token"), "processor-production-") {
		t.Fatalf("production token: %s", r.raw)
	}
	wantACHField(t, h.post(ach("/_sandbox/processor/token/revoke"), keyA, map[string]any{}), "processor_token")
}
