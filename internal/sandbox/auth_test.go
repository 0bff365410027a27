package sandbox

import (
	"net/http"
	"strings"
	"testing"
)

func TestAuth(t *testing.T) {
	listed := newHarness(t, Options{Keys: []Key{{Value: keyA, FundConfirmation: true}, {Value: "sk_live_listed", FundConfirmation: true}}})
	open := newHarness(t, Options{Keys: []Key{}})
	cases := []struct {
		name   string
		h      *harness
		header string // raw Authorization header; "-" for none
		status int
	}{
		{"no header", listed, "-", http.StatusUnauthorized},
		{"empty bearer", listed, "Bearer ", http.StatusUnauthorized},
		{"unknown key", listed, "Bearer sk_test_nope", http.StatusUnauthorized},
		{"listed live key", listed, "Bearer sk_live_listed", http.StatusUnauthorized},
		{"listed key", listed, "Bearer " + keyA, http.StatusOK},
		{"bare key", listed, keyA, http.StatusOK},
		{"lowercase scheme", listed, "bearer " + keyA, http.StatusOK},
		{"open: any test key", open, "Bearer sk_test_whatever", http.StatusOK},
		{"open: live key", open, "Bearer sk_live_whatever", http.StatusUnauthorized},
		{"open: not a key", open, "Bearer hunter2", http.StatusUnauthorized},
		{"open: bare prefix", open, "Bearer sk_test_", http.StatusUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, tc.h.url+"/v1/check/list", nil)
			if tc.header != "-" {
				req.Header.Set("Authorization", tc.header)
			}
			res, err := tc.h.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
		})
	}
	r := listed.get("/v1/check/list", "sk_test_nope")
	if r.body["error"] != true || strings.Contains(string(r.raw), "sk_test_nope") {
		t.Errorf("401 body %s must be an error envelope without the key", r.raw)
	}
}

func TestKeyIsolation(t *testing.T) {
	h := newHarness(t, Options{})
	c := h.create(keyA, map[string]any{"label": "mine"})
	id := c["check_id"].(string)
	wantStatus(t, h.get("/v1/check/"+id, keyB), http.StatusNotFound)
	wantStatus(t, h.send(http.MethodDelete, "/v1/check/"+id, keyB, typeJSON, ""), http.StatusNotFound)
	edit := with(map[string]any{"check_id": id, "number": "1"})
	wantStatus(t, h.post("/v1/check/edit", keyB, edit), http.StatusNotFound)
	wantStatus(t, h.post("/_sandbox/deposit", keyB, map[string]any{"check_ids": []string{id}}), http.StatusNotFound)
	if r := h.get("/v1/check/list?label=mine", keyB); len(r.data()) != 0 || r.list()["total"] != "0" {
		t.Errorf("key B sees key A's checks: %s", r.raw)
	}
	h.advance(keyB, 5)
	if got := h.status(keyA, id); got != statusInProcess {
		t.Errorf("key B's clock moved key A's check to %s", got)
	}
	if got := h.srv.KeyStats(keyA).Checks; got != 1 {
		t.Errorf("key A has %d checks", got)
	}
}

func TestRoutes(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.create(keyA, nil)["check_id"].(string)
	cases := []struct {
		method, path string
		status       int
		allow        string
	}{
		{http.MethodGet, "/v1/nothing", http.StatusNotFound, ""},
		{http.MethodGet, "/v1/check/", http.StatusNotFound, ""},
		{http.MethodGet, "/v1/check/a/b", http.StatusNotFound, ""},
		{http.MethodGet, "/v1/check/list/", http.StatusNotFound, ""},
		{http.MethodGet, "/v1/check/create", http.StatusMethodNotAllowed, "POST"},
		{http.MethodPost, "/v1/check/list", http.StatusMethodNotAllowed, "GET"},
		{http.MethodPut, "/v1/check/" + id, http.StatusMethodNotAllowed, "DELETE, GET"},
		{http.MethodGet, "/v1/check/edit", http.StatusMethodNotAllowed, "POST"},
		{http.MethodGet, "/v1/paymentlink/changestatus/" + id, http.StatusMethodNotAllowed, "DELETE"},
		{http.MethodGet, "/v1/account/tokenization", http.StatusMethodNotAllowed, "POST"},
		{http.MethodGet, "/v1/check/short", http.StatusBadRequest, ""},
		{http.MethodGet, "/v1/check/" + strings.Repeat("0", 36), http.StatusNotFound, ""},
		{http.MethodGet, "/v1/check/" + id, http.StatusOK, ""},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := h.send(tc.method, tc.path, keyA, "", "")
			wantStatus(t, r, tc.status)
			if got := r.header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
			if tc.status != http.StatusOK && r.body["error"] != true {
				t.Errorf("no error envelope: %s", r.raw)
			}
		})
	}
}

func TestDeleteNeedsContentType(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.create(keyA, nil)["check_id"].(string)
	wantField(t, h.send(http.MethodDelete, "/v1/check/"+id, keyA, "", ""), "Content-Type")
	wantField(t, h.send(http.MethodDelete, "/v1/check/"+id, keyA, "text/plain", ""), "Content-Type")
	r := h.send(http.MethodDelete, "/v1/check/"+id, keyA, typeJSON, "")
	wantStatus(t, r, http.StatusOK)
	if string(r.raw) != `{"success":true}` {
		t.Errorf("delete answer %s", r.raw)
	}
	if got := h.status(keyA, id); got != statusVoid {
		t.Errorf("status after delete %s", got)
	}
	wantStatus(t, h.send(http.MethodDelete, "/v1/check/"+id, keyA, typeForm, ""), http.StatusPaymentRequired)
	tok := h.post("/v1/paymentlink/create", keyA, map[string]any{}).body["checkout_link"].(map[string]any)["checkout_token"].(string)
	wantField(t, h.send(http.MethodDelete, "/v1/paymentlink/changestatus/"+tok, keyA, "", ""), "Content-Type")
}

func TestParseKey(t *testing.T) {
	cases := []struct {
		in   string
		want Key
		err  bool
	}{
		{"sk_test_abc", Key{Value: "sk_test_abc", FundConfirmation: true}, false},
		{"sk_test_abc:full", Key{Value: "sk_test_abc", FundConfirmation: true}, false},
		{"sk_test_abc:basic", Key{Value: "sk_test_abc"}, false},
		{" sk_test_abc ", Key{Value: "sk_test_abc", FundConfirmation: true}, false},
		{"sk_test_abc:gold", Key{}, true},
		{"sk_live_abc", Key{}, true},
		{"sk_test_", Key{}, true},
		{"abc", Key{}, true},
		{"sk_test_a b", Key{}, true},
		{"", Key{}, true},
	}
	for _, tc := range cases {
		got, err := ParseKey(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseKey(%q) = %v, %v", tc.in, got, err)
		}
		if err != nil && strings.Contains(err.Error(), "abc") {
			t.Errorf("ParseKey error repeats the key: %v", err)
		}
	}
}
