package sandbox

import (
	"net/http"
	"strings"
	"testing"
)

// TestACHAuth checks the ACH API's 403s (docs/ach-wire.md,
// Authentication) while /v1 keeps its 401s.
func TestACHAuth(t *testing.T) {
	listed := newHarness(t, Options{Keys: []Key{
		{Value: keyA, FundConfirmation: true}, {Value: "sk_live_listed"}, {Value: "sk_test_off", Inactive: true},
	}})
	open := newHarness(t, Options{Keys: []Key{}})
	cases := []struct {
		name   string
		h      *harness
		header string // raw Authorization header; "-" for none
		status int
		msg    string
	}{
		{"no header", listed, "-", http.StatusForbidden, "API key is missing in Authorization header"},
		{"empty header", listed, "", http.StatusForbidden, "API key is missing in Authorization header"},
		{"empty bearer", listed, "Bearer ", http.StatusForbidden, "API key is missing in Authorization header"},
		{"unknown key", listed, "Bearer sk_test_nope", http.StatusForbidden, "Access key invalid"},
		{"listed live key", listed, "Bearer sk_live_listed", http.StatusForbidden, "Access key invalid"},
		{"inactive key", listed, "Bearer sk_test_off", http.StatusForbidden, "App inactive"},
		{"listed key", listed, "Bearer " + keyA, http.StatusOK, ""},
		{"bare key", listed, keyA, http.StatusOK, ""},
		{"open: any test key", open, "Bearer sk_test_whatever", http.StatusOK, ""},
		{"open: live key", open, "Bearer sk_live_whatever", http.StatusForbidden, "Access key invalid"},
		{"open: not a key", open, "Bearer hunter2", http.StatusForbidden, "Access key invalid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.h.sendAuth(http.MethodGet, ach("/webhooks"), tc.header)
			if tc.msg == "" {
				wantStatus(t, r, tc.status)
				return
			}
			wantACHError(t, r, tc.status, tc.msg)
			if strings.Contains(string(r.raw), "sk_") {
				t.Errorf("403 body %s repeats the key", r.raw)
			}
		})
	}
	// /v1 keeps its own answers, and serves an inactive key.
	wantStatus(t, listed.sendAuth(http.MethodGet, "/v1/check/list", "-"), http.StatusUnauthorized)
	wantStatus(t, listed.sendAuth(http.MethodGet, "/v1/check/list", "Bearer sk_test_off"), http.StatusOK)
}

// sendAuth makes a request with a raw Authorization header ("-": none).
func (h *harness) sendAuth(method, path, header string) resp {
	h.t.Helper()
	req, err := http.NewRequest(method, h.url+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if header != "-" {
		req.Header.Set("Authorization", header)
	}
	res, err := h.client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := decodeResp(res)
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

func TestParseKeyInactive(t *testing.T) {
	k, err := ParseKey("sk_test_abc:inactive")
	if err != nil || k != (Key{Value: "sk_test_abc", FundConfirmation: true, Inactive: true}) {
		t.Fatalf("ParseKey = %+v, %v", k, err)
	}
	if _, err := ParseKey("sk_test_abc:sleepy"); err == nil || strings.Contains(err.Error(), "sk_test_abc") {
		t.Fatalf("bad plan: %v", err)
	}
}

// TestACHRouting checks unknown paths, wrong methods and the provider
// segment, all in the ACH envelope and before authentication.
func TestACHRouting(t *testing.T) {
	h := newHarness(t, Options{})
	for _, path := range []string{"/ach/v2", "/ach/v2/", "/ach/v2/nothing", "/ach/v2/user/", "/ach/v2/funding-source/processor/stripe",
		"/ach/v2/_sandbox/funding-source//micro-deposits", "/ach/v2/_sandbox/funding-source/a/b/micro-deposits"} {
		wantACHError(t, h.post(path, "", map[string]any{}), http.StatusNotFound, "no such endpoint")
	}
	r := h.send(http.MethodDelete, ach("/user"), "", "", "")
	wantStatus(t, r, http.StatusMethodNotAllowed)
	if r.header.Get("Allow") != "GET, POST" || r.body["success"] != false {
		t.Fatalf("405: Allow %q, body %s", r.header.Get("Allow"), r.raw)
	}
	r = h.send(http.MethodPost, ach("/_sandbox/funding-source/x/micro-deposits"), keyA, "", "")
	wantStatus(t, r, http.StatusMethodNotAllowed)
	if r.header.Get("Allow") != "GET" {
		t.Fatalf("405 Allow %q", r.header.Get("Allow"))
	}
	wantStatus(t, h.get(ach("/funding-source/processor/plaid"), keyA), http.StatusMethodNotAllowed)
}
