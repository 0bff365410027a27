package sandbox

import (
	"net/http"
	"strings"
	"testing"
)

func TestACHCreateSource(t *testing.T) {
	h := newHarness(t, Options{})
	u := h.newUser(keyA)
	r := h.post(ach("/funding-source"), keyA, map[string]any{
		"user_id": u, "routing_number": FixtureRouting, "account_number": "123456789", "account_type": "savings", "nickname": "Rent",
	})
	wantStatus(t, r, http.StatusOK)
	id := str(r.body, "funding_source_id")
	fs := obj(r.body, "funding_source")
	want := map[string]any{
		"source_id": id, "funding_source_id": id, "user_id": u, "status": "Pending", "is_primary": true,
		"routing": FixtureRouting, "bank": "Sandbox Test Bank", "bank_name": "Sandbox Test Bank",
		"lbacc": "6789", "last_four": "6789", "type": "savings", "nickname": "Rent", "created_at": "03/02/2026",
	}
	for k, v := range want {
		if fs[k] != v {
			t.Errorf("funding_source.%s = %v, want %v", k, fs[k], v)
		}
	}
	if len(id) != idLen || str(r.body, "status") != "Pending" || strings.Contains(string(r.raw), "123456789") {
		t.Fatalf("create answer %s", r.raw)
	}
	if g := h.source(keyA, id); g["status"] != "Pending" || g["source_id"] != id {
		t.Fatalf("get: %v", g)
	}
	wantACHError(t, h.get(ach("/funding-source/"+id), keyB), http.StatusNotFound, "Funding source not found")
	wantACHError(t, h.get(ach("/funding-source/:nope"), keyA), http.StatusNotFound, "Funding source not found")
}

func TestACHSourceErrors(t *testing.T) {
	h := newHarness(t, Options{})
	u := h.newUser(keyA)
	valid := func() map[string]any {
		return map[string]any{"user_id": u, "routing_number": FixtureRouting, "account_number": newAccount(), "account_type": "checking"}
	}
	r := h.post(ach("/funding-source"), keyA, map[string]any{"user_id": u, "routing_number": "12345678", "account_number": "1234", "account_type": "checking"})
	wantACHError(t, r, http.StatusBadRequest, "routing_number must be 9 digits")
	cases := []struct {
		field string
		value any
	}{
		{"user_id", nil}, {"routing_number", nil}, {"routing_number", "99990000a"}, {"routing_number", 999900001},
		{"account_number", nil}, {"account_number", "123"}, {"account_number", strings.Repeat("1", 18)},
		{"account_type", nil}, {"account_type", "cd"}, {"nickname", strings.Repeat("n", 129)},
	}
	for _, tc := range cases {
		b := valid()
		if tc.value == nil {
			delete(b, tc.field)
		} else {
			b[tc.field] = tc.value
		}
		wantACHField(t, h.post(ach("/funding-source"), keyA, b), tc.field)
	}
	b := valid()
	b["user_id"] = "00000000-0000-0000-0000-000000000000"
	wantACHError(t, h.post(ach("/funding-source"), keyA, b), http.StatusNotFound, "Customer not found")
	wantACHError(t, h.post(ach("/funding-source"), keyB, valid()), http.StatusNotFound, "You are not the owner of the customer")
}

func TestACHOnDemand(t *testing.T) {
	h := newHarness(t, Options{})
	u := h.newUser(keyA)
	r := h.post(ach("/on-demand/funding-source"), keyA, map[string]any{"user_id": u, "routing_number": FixtureRouting, "account_number": "1111000016"})
	wantStatus(t, r, http.StatusOK)
	if str(r.body, "status") != "Verified" || str(r.body, "bank_name") != "Sandbox Test Bank" || str(r.body, "last_four") != "0016" ||
		str(obj(r.body, "funding_source"), "type") != "checking" || str(r.body, "funding_source_id") == "" {
		t.Fatalf("fixture account: %s", r.raw)
	}
	r = h.post(ach("/on-demand/funding-source"), keyA, map[string]any{"user_id": u, "routing_number": "021000021", "account_number": "55512345", "account_type": "savings"})
	wantStatus(t, r, http.StatusOK)
	if str(r.body, "status") != "Unverified" || str(obj(r.body, "funding_source"), "type") != "savings" {
		t.Fatalf("other account: %s", r.raw)
	}
	wantACHField(t, h.post(ach("/on-demand/funding-source"), keyA, map[string]any{"user_id": u, "routing_number": FixtureRouting, "account_number": "1", "account_type": "x"}), "account_number")
}

func TestACHListAndRemoveSources(t *testing.T) {
	h := newHarness(t, Options{})
	u := h.newUser(keyA)
	acct := newAccount()
	s1 := h.newSource(keyA, u, acct)
	s2 := h.newSource(keyA, u, newAccount())
	remove := func(key string, body map[string]any) resp { return h.post(ach("/funding-source/remove"), key, body) }
	wantACHError(t, remove(keyB, map[string]any{"user_id": u, "source_id": s1}), http.StatusNotFound, "You are not the owner of the customer")
	other := h.newUser(keyA)
	wantACHError(t, remove(keyA, map[string]any{"user_id": other, "source_id": s1}), http.StatusNotFound, "Funding source not found")
	wantACHField(t, remove(keyA, map[string]any{"user_id": u}), "source_id")
	wantStatus(t, remove(keyA, map[string]any{"user_id": u, "source_id": s1}), http.StatusOK)
	wantStatus(t, remove(keyA, map[string]any{"user_id": u, "funding_source_id": s1}), http.StatusOK) // again: harmless
	r := h.get(ach("/funding-source/user/:"+u), keyA)
	wantStatus(t, r, http.StatusOK)
	l := arr(r.body, "list")
	if len(l) != 2 || str(l[0].(map[string]any), "source_id") != s1 || str(l[0].(map[string]any), "status") != "deleted" ||
		str(l[1].(map[string]any), "source_id") != s2 || l[0].(map[string]any)["is_primary"] != false {
		t.Fatalf("list: %s", r.raw)
	}
	wantStatus(t, h.get(ach("/funding-source/user/"+u), keyA), http.StatusOK)
	wantACHError(t, h.get(ach("/funding-source/user/:"+u), keyB), http.StatusNotFound, "You are not the owner of the customer")
	// The removed account is free: another customer may link it.
	h.newSource(keyA, other, acct)
	users := h.get(ach("/user/:"+u), keyA)
	if srcs := arr(obj(users.body, "user"), "sources"); len(srcs) != 2 || str(srcs[0].(map[string]any), "status") != "deleted" {
		t.Fatalf("user sources: %s", users.raw)
	}
}

// TestACHAccountUniqueness checks that an account belongs to one
// customer at a time across keys, /accounts, and freeing by
// /accounts/delete.
func TestACHAccountUniqueness(t *testing.T) {
	h := newHarness(t, Options{})
	u1, u2, ub := h.newUser(keyA), h.newUser(keyA), h.newUser(keyB)
	acct := newAccount()
	src := h.newSource(keyA, u1, acct)
	body := func(u string) map[string]any {
		return map[string]any{"user_id": u, "routing_number": FixtureRouting, "account_number": acct, "account_type": "checking"}
	}
	wantACHError(t, h.post(ach("/funding-source"), keyA, body(u1)), http.StatusBadRequest, "This bank account is already linked to this customer")
	wantACHError(t, h.post(ach("/funding-source"), keyA, body(u2)), http.StatusBadRequest, "This bank account is associated with another user")
	wantACHError(t, h.post(ach("/on-demand/funding-source"), keyB, body(ub)), http.StatusBadRequest, "This bank account is associated with another user")
	// The same number at another bank is another account.
	other := body(u2)
	other["routing_number"] = "021000021"
	wantStatus(t, h.post(ach("/funding-source"), keyA, other), http.StatusOK)

	q := "/accounts?routing_number=" + FixtureRouting + "&account_number=" + acct
	r := h.get(ach(q), keyA)
	if r.body["available"] != false || str(r.body, "user_id") != u1 {
		t.Fatalf("owner's view: %s", r.raw)
	}
	r = h.get(ach(q), keyB)
	if r.body["available"] != false || r.body["user_id"] != nil {
		t.Fatalf("other key's view: %s", r.raw)
	}
	wantACHField(t, h.get(ach("/accounts?routing_number=1&account_number="+acct), keyA), "routing_number")

	del := map[string]any{"routing_number": FixtureRouting, "account_number": acct}
	wantACHError(t, h.post(ach("/accounts/delete"), keyB, del), http.StatusNotFound, "Bank account not found")
	wantStatus(t, h.post(ach("/accounts/delete"), keyA, del), http.StatusOK)
	if st := h.source(keyA, src)["status"]; st != "deleted" {
		t.Fatalf("source after /accounts/delete: %v", st)
	}
	if r := h.get(ach(q), keyB); r.body["available"] != true {
		t.Fatalf("freed account: %s", r.raw)
	}
	wantACHError(t, h.post(ach("/accounts/delete"), keyA, del), http.StatusNotFound, "Bank account not found")
	wantStatus(t, h.post(ach("/on-demand/funding-source"), keyB, body(ub)), http.StatusOK)
}

func TestACHMaxSources(t *testing.T) {
	for _, tc := range []struct {
		opt, want int
	}{{0, 5}, {2, 2}} {
		h := newHarness(t, Options{MaxFundingSources: tc.opt})
		u := h.newUser(keyA)
		var first string
		for i := range tc.want {
			id := h.newSource(keyA, u, newAccount())
			if i == 0 {
				first = id
			}
		}
		over := map[string]any{"user_id": u, "routing_number": FixtureRouting, "account_number": newAccount(), "account_type": "checking"}
		wantACHError(t, h.post(ach("/funding-source"), keyA, over), http.StatusBadRequest, "You exceeded the maximum number of bank accounts")
		wantACHError(t, h.exchange(keyA, u, h.token(keyA, newAccount(), nil)), http.StatusBadRequest, "You exceeded the maximum number of bank accounts")
		// A deleted source does not count.
		wantStatus(t, h.post(ach("/funding-source/remove"), keyA, map[string]any{"user_id": u, "source_id": first}), http.StatusOK)
		wantStatus(t, h.post(ach("/funding-source"), keyA, over), http.StatusOK)
	}
}

// TestACHPrimary checks that the first source is primary, later ones
// are not, and a processor-token source replaces the primary.
func TestACHPrimary(t *testing.T) {
	h := newHarness(t, Options{})
	u := h.newUser(keyA)
	s1 := h.newSource(keyA, u, newAccount())
	s2 := h.newSource(keyA, u, newAccount())
	if h.source(keyA, s1)["is_primary"] != true || h.source(keyA, s2)["is_primary"] != false {
		t.Fatal("first source is not the only primary")
	}
	r := h.exchange(keyA, u, h.token(keyA, newAccount(), nil))
	wantStatus(t, r, http.StatusOK)
	s3 := str(obj(r.body, "funding_source"), "source_id")
	if h.source(keyA, s1)["is_primary"] != false || h.source(keyA, s3)["is_primary"] != true {
		t.Fatal("processor source did not replace the primary")
	}
	users := h.get(ach("/user/"+u), keyA)
	n := 0
	for _, s := range arr(obj(users.body, "user"), "sources") {
		if s.(map[string]any)["is_primary"] == true {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d primaries: %s", n, users.raw)
	}
}

func TestACHWebhooks(t *testing.T) {
	h := newHarness(t, Options{})
	if r := h.get(ach("/webhooks"), keyA); r.status != http.StatusOK || r.body["webhook_url"] != "" {
		t.Fatalf("before: %s", r.raw)
	}
	for _, u := range []string{"https://example.com/a", "http://example.com/b"} {
		r := h.post(ach("/webhooks"), keyA, map[string]any{"url": u})
		if r.status != http.StatusOK || r.body["webhook_url"] != u {
			t.Fatalf("set %s: %s", u, r.raw)
		}
	}
	if r := h.get(ach("/webhooks"), keyA); r.body["webhook_url"] != "http://example.com/b" {
		t.Fatalf("after: %s", r.raw)
	}
	if r := h.get(ach("/webhooks"), keyB); r.body["webhook_url"] != "" {
		t.Fatalf("other key sees a URL: %s", r.raw)
	}
	for _, u := range []any{nil, "", "ftp://x/y", "/relative", 5} {
		wantACHField(t, h.post(ach("/webhooks"), keyA, map[string]any{"url": u}), "url")
	}
}
