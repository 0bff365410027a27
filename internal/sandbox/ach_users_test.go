package sandbox

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestACHCreateAndGetUser(t *testing.T) {
	h := newHarness(t, Options{})
	r := h.post(ach("/user"), keyA, map[string]any{"firstName": " Ada ", "lastName": "Lovelace", "email": "Ada@Example.com", "phone": "555-0100"})
	wantStatus(t, r, http.StatusOK)
	u := obj(r.body, "user")
	id := str(u, "user_id")
	if len(id) != idLen || str(r.body, "user_id") != id || r.body["success"] != true {
		t.Fatalf("create: %s", r.raw)
	}
	if str(u, "firstName") != "Ada" || str(u, "email") != "Ada@Example.com" || str(u, "phone") != "555-0100" ||
		str(u, "created_at") != "2026-03-02 10:00:00" || u["sources"] == nil || len(arr(u, "sources")) != 0 {
		t.Fatalf("user object: %s", r.raw)
	}
	for _, path := range []string{"/user/:" + id, "/user/" + id} {
		g := h.get(ach(path), keyA)
		wantStatus(t, g, http.StatusOK)
		if str(obj(g.body, "user"), "user_id") != id || str(obj(g.body, "user"), "lastName") != "Lovelace" {
			t.Fatalf("GET %s: %s", path, g.raw)
		}
	}
	wantACHError(t, h.get(ach("/user/:"+id), keyB), http.StatusNotFound, "You are not the owner of the customer")
	wantACHError(t, h.get(ach("/user/:00000000-0000-0000-0000-000000000000"), keyA), http.StatusNotFound, "Customer not found")
}

func TestACHDuplicateEmail(t *testing.T) {
	h := newHarness(t, Options{})
	body := map[string]any{"firstName": "A", "lastName": "B", "email": "dup@example.com"}
	first := h.post(ach("/user"), keyA, body)
	wantStatus(t, first, http.StatusOK)
	body["email"] = "DUP@example.COM"
	r := h.post(ach("/user"), keyA, body)
	wantACHError(t, r, http.StatusBadRequest, "A customer with this email already exists")
	if str(r.body, "user_id") != str(first.body, "user_id") {
		t.Fatalf("duplicate does not name the existing customer: %s", r.raw)
	}
	// Another key has its own customers.
	wantStatus(t, h.post(ach("/user"), keyB, body), http.StatusOK)
}

func TestACHUserValidation(t *testing.T) {
	h := newHarness(t, Options{})
	valid := func() map[string]any {
		return map[string]any{"firstName": "A", "lastName": "B", "email": "v@example.com", "phone": "1"}
	}
	cases := []struct {
		field string
		value any // nil deletes
	}{
		{"firstName", nil}, {"firstName", strings.Repeat("x", 129)}, {"firstName", 7},
		{"lastName", nil}, {"lastName", strings.Repeat("x", 129)},
		{"email", nil}, {"email", "no-at-sign"}, {"email", strings.Repeat("x", 75) + "@b.com"},
		{"phone", strings.Repeat("1", 21)},
	}
	for _, tc := range cases {
		b := valid()
		if tc.value == nil {
			delete(b, tc.field)
		} else {
			b[tc.field] = tc.value
		}
		wantACHField(t, h.post(ach("/user"), keyA, b), tc.field)
	}
	wantACHField(t, h.send(http.MethodPost, ach("/user"), keyA, typeJSON, "[1]"), "body")
	// A form-encoded body is accepted.
	wantStatus(t, h.send(http.MethodPost, ach("/user"), keyA, typeForm, "firstName=F&lastName=L&email=f%40x.io"), http.StatusOK)
}

func TestACHListUsers(t *testing.T) {
	h := newHarness(t, Options{})
	var ids []string
	for range 5 {
		ids = append(ids, h.newUser(keyA))
	}
	h.newUser(keyB)
	r := h.get(ach("/user?page=2&limit=2"), keyA)
	wantStatus(t, r, http.StatusOK)
	l := r.list()
	if l["current_page"] != json.Number("2") || l["last_page"] != json.Number("3") || l["per_page"] != json.Number("2") || l["total"] != json.Number("5") {
		t.Fatalf("paging: %s", r.raw)
	}
	d := r.data()
	if len(d) != 2 || str(d[0].(map[string]any), "user_id") != ids[2] || str(d[1].(map[string]any), "user_id") != ids[3] {
		t.Fatalf("page 2 is not customers 3 and 4, oldest first: %s", r.raw)
	}
	r = h.get(ach("/user"), keyA)
	if len(r.data()) != 5 || r.list()["per_page"] != json.Number("15") {
		t.Fatalf("default page: %s", r.raw)
	}
	if len(h.get(ach("/user?page=9"), keyA).data()) != 0 {
		t.Fatal("page past the last is not empty")
	}
	empty := h.get(ach("/user"), keyBasic)
	if empty.list()["last_page"] != json.Number("1") || len(empty.data()) != 0 {
		t.Fatalf("empty list: %s", empty.raw)
	}
	for _, q := range []string{"limit=0", "limit=101", "page=0", "page=x", "limit=%zz"} {
		r := h.get(ach("/user?"+q), keyA)
		wantStatus(t, r, http.StatusBadRequest)
	}
}
