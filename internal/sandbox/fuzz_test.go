package sandbox

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
)

// FuzzCreate sends arbitrary bodies under arbitrary content types to the
// create endpoint, of the exact and of the quirks mode. Whatever arrives,
// the answer is a JSON envelope with a status below 500, the same status
// in both modes, and the handler never panics.
func FuzzCreate(f *testing.F) {
	valid, _ := json.Marshal(validCheck())
	seeds := []struct{ ctype, body string }{
		{typeJSON, string(valid)},
		{"", string(valid)},
		{typeForm, "amount=5.00&memo=Rent&name=Bob&email=b%40x.io&bank_routing=999900001&bank_account=1111000008"},
		{typeJSON, `{"amount":"1e999999999","memo":"m","name":"n","email":"a@b","bank_routing":"999900001","bank_account":"1111000001"}`},
		{typeJSON, `{"amount":-0.0,"number":1e3,"recurring":"1","recurring_cycle":"day"}`},
		{typeJSON, `{"amount":{"x":1},"memo":[1],"verify_before_save":"TRUE","fund_confirmation":null}`},
		{typeJSON, `{"token":"` + strSeq(36) + `","store":"s","amount":1,"memo":"m","name":"n","email":"a@b"}`},
		{typeJSON, `{"authorization_date":"9999-99-99","amount":"0.001"}`},
		{typeJSON, `{"amount":0.57,"number":"0000000000","memo":"m","name":"n","email":"a@b","bank_routing":"999900001","bank_account":"1234"}`},
		{typeJSON, `{"amount":"90071992547409.93","number":"0042","label":"  L  ","phone":"","memo":"m","name":"n","email":"a@b","bank_routing":"1","bank_account":"12345678901234567"}`},
		{typeJSON, `{"memo":"\ud800","name":"\u0000"}`},
		{typeJSON, `[]`},
		{typeJSON, `{`},
		{typeForm, "amount=%zz"},
		{typeForm, "memo=\xff\xfe&name=a"},
		{"text/plain", "hello"},
		{"application/json; charset=\"", "{}"},
		{"", ""},
	}
	for _, s := range seeds {
		f.Add(s.ctype, []byte(s.body))
	}
	srvs := []*Server{New(Options{Keys: []Key{{Value: "sk_test_fuzz"}}}), New(Options{Keys: []Key{{Value: "sk_test_fuzz"}}, Quirks: true})}
	f.Fuzz(func(t *testing.T, ctype string, body []byte) {
		var statuses [2]int
		for i, srv := range srvs {
			w := &discardWriter{}
			req := newRequest(http.MethodPost, "/v1/check/create", "sk_test_fuzz", "", body)
			req.Header["Content-Type"] = []string{ctype}
			srv.ServeHTTP(w, req)
			if w.status >= 500 || w.status == 0 {
				t.Fatalf("status %d for %q %q: %s", w.status, ctype, body, w.body.String())
			}
			var env map[string]any
			if err := json.Unmarshal(w.body.Bytes(), &env); err != nil {
				t.Fatalf("answer is not JSON: %q", w.body.String())
			}
			statuses[i] = w.status
		}
		if statuses[0] != statuses[1] {
			t.Fatalf("status %d in the exact mode, %d in quirks mode, for %q %q", statuses[0], statuses[1], ctype, body)
		}
	})
}

// FuzzList sends arbitrary query strings to the check list, of the exact
// and of the quirks mode.
func FuzzList(f *testing.F) {
	for _, q := range []string{"", "limit=100&page=2&sort=name&direction=asc", "$limit=5&$sort=number",
		"from_date=2026-03-01&to_date=2026-02-01", "page=99999999999999999999", "label=%zz", "limit=-1&page=0",
		"label=X&limit=2&page=2", "label=%20x%20&sort=number"} {
		f.Add(q)
	}
	srvs := []*Server{New(Options{}), New(Options{Quirks: true})}
	body, _ := json.Marshal(with(map[string]any{"label": "x"}))
	for _, srv := range srvs {
		for range 5 {
			srv.ServeHTTP(&discardWriter{}, newRequest(http.MethodPost, "/v1/check/create", "sk_test_fuzz", typeJSON, body))
		}
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, srv := range srvs {
			w := &discardWriter{}
			req := newRequest(http.MethodGet, "/v1/check/list", "sk_test_fuzz", "", nil)
			req.URL.RawQuery = q
			srv.ServeHTTP(w, req)
			if w.status != http.StatusOK && w.status != http.StatusBadRequest {
				t.Fatalf("status %d for %q: %s", w.status, q, w.body.String())
			}
			if w.status == http.StatusOK {
				if _, err := url.ParseQuery(q); err != nil {
					t.Fatalf("malformed query %q accepted", q)
				}
			}
		}
	})
}
