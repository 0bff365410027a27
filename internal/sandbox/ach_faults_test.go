package sandbox

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// TestACHDropStoresCreates checks that DropRate loses the answer of each
// ACH create while the effect is stored.
func TestACHDropStoresCreates(t *testing.T) {
	h := newHarness(t, Options{DropRate: 1})
	try := func(path string, body map[string]any) {
		t.Helper()
		b, _ := json.Marshal(body)
		if _, err := h.try(context.Background(), http.MethodPost, ach(path), keyA, typeJSON, string(b)); err == nil {
			t.Fatalf("%s answered although DropRate is 1", path)
		}
	}
	try("/user", map[string]any{"firstName": "D", "lastName": "R", "email": "drop@example.com"})
	list := h.get(ach("/user"), keyA)
	if len(list.data()) != 1 {
		t.Fatalf("dropped customer not stored: %s", list.raw)
	}
	u := str(list.data()[0].(map[string]any), "user_id")
	acct := newAccount()
	try("/funding-source", map[string]any{"user_id": u, "routing_number": FixtureRouting, "account_number": acct, "account_type": "checking"})
	try("/on-demand/funding-source", map[string]any{"user_id": u, "routing_number": FixtureRouting, "account_number": "1111000016"})
	try("/funding-source/processor/plaid", map[string]any{"user_id": u, "processor_token": h.token(keyA, newAccount(), nil)})
	srcs := arr(h.get(ach("/funding-source/user/"+u), keyA).body, "list")
	if len(srcs) != 3 {
		t.Fatalf("%d sources stored, want 3", len(srcs))
	}
	// The retry meets the stored effect.
	r := h.post(ach("/user"), keyA, map[string]any{"firstName": "D", "lastName": "R", "email": "drop@example.com"})
	if r.status != http.StatusBadRequest || str(r.body, "user_id") != u {
		t.Fatalf("retry: %s", r.raw)
	}
	if st := h.srv.Stats(); st.Drops != 4 || st.ACHCreates != 4 || st.Customers != 1 || st.FundingSources != 3 {
		t.Errorf("stats %+v", st)
	}
}

// TestACHErrorRate checks the injected errors' envelope and that they
// have no effect; control endpoints are exempt.
func TestACHErrorRate(t *testing.T) {
	h := newHarness(t, Options{ErrorRate: 1, Seed: 7})
	seen := map[int]int{}
	for range 20 {
		r := h.post(ach("/user"), keyA, map[string]any{"firstName": "E", "lastName": "R", "email": "e@example.com"})
		seen[r.status]++
		wantACHError(t, r, r.status, "sandbox: injected error")
		if r.status == http.StatusServiceUnavailable && r.header.Get("Retry-After") == "" {
			t.Error("503 without Retry-After")
		}
	}
	if seen[500] == 0 || seen[503] == 0 || seen[500]+seen[503] != 20 {
		t.Errorf("statuses %v", seen)
	}
	if st := h.srv.Stats(); st.Customers != 0 {
		t.Errorf("an injected error stored a customer: %+v", st)
	}
	wantStatus(t, h.post(ach("/_sandbox/processor/token"), keyA, map[string]any{
		"processor": "svcach", "routing_number": FixtureRouting, "account_number": "1234"}), http.StatusOK)
	wantStatus(t, h.get(ach("/_sandbox/clock"), keyA), http.StatusOK)
}

// TestACHRateLimit checks the shared per-key limiter with the ACH wording.
func TestACHRateLimit(t *testing.T) {
	h := newHarness(t, Options{RateLimit: 1})
	wantStatus(t, h.get(ach("/webhooks"), keyA), http.StatusOK)
	r := h.get(ach("/webhooks"), keyA)
	wantACHError(t, r, http.StatusTooManyRequests, "rate limit exceeded")
	if r.header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	wantStatus(t, h.get("/v1/check/list", keyA), http.StatusTooManyRequests) // one limiter per key
	wantStatus(t, h.get(ach("/webhooks"), keyB), http.StatusOK)
	h.clock.Add(time.Second)
	wantStatus(t, h.get(ach("/webhooks"), keyA), http.StatusOK)
}

// TestACHQuirks checks the quirks-mode shapes: lowercase statuses, ids
// under "id" in lists, booleans as 0/1.
func TestACHQuirks(t *testing.T) {
	h := newHarness(t, Options{Quirks: true})
	u := h.newUser(keyA)
	r := h.post(ach("/funding-source"), keyA, map[string]any{"user_id": u, "routing_number": FixtureRouting, "account_number": newAccount(), "account_type": "checking"})
	fs := obj(r.body, "funding_source")
	id := str(r.body, "funding_source_id")
	if str(r.body, "status") != "pending" || fs["status"] != "pending" || fs["is_primary"] != json.Number("1") || fs["source_id"] != id || r.body["success"] != true {
		t.Fatalf("create: %s", r.raw)
	}
	od := h.post(ach("/on-demand/funding-source"), keyA, map[string]any{"user_id": u, "routing_number": "021000021", "account_number": newAccount()})
	if str(od.body, "status") != "unverified" {
		t.Fatalf("on-demand: %s", od.raw)
	}
	l := arr(h.get(ach("/funding-source/user/"+u), keyA).body, "list")
	first := l[0].(map[string]any)
	if first["id"] != id || first["source_id"] != nil || first["is_primary"] != json.Number("1") || l[1].(map[string]any)["is_primary"] != json.Number("0") {
		t.Fatalf("list entry %v", first)
	}
	users := h.get(ach("/user"), keyA).data()
	uv := users[0].(map[string]any)
	if uv["id"] != u || uv["user_id"] != nil || arr(uv, "sources")[0].(map[string]any)["id"] != id {
		t.Fatalf("user list entry %v", uv)
	}
	if g := obj(h.get(ach("/user/"+u), keyA).body, "user"); g["user_id"] != u {
		t.Fatalf("single user %v", g)
	}
	if a := h.get(ach("/accounts?routing_number=021000021&account_number=999999"), keyA); a.body["available"] != json.Number("1") {
		t.Fatalf("accounts: %s", a.raw)
	}
	// Validation and error answers are those of the exact mode.
	wantACHError(t, h.get(ach("/user/nope"), keyA), http.StatusNotFound, "Customer not found")
}
