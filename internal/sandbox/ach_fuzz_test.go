package sandbox

import (
	"encoding/json"
	"net/http"
	"testing"
)

// achFuzzPaths are the ACH endpoints that decode a request body.
var achFuzzPaths = []string{
	"/user", "/funding-source", "/on-demand/funding-source", "/funding-source/processor/plaid",
	"/funding-source/remove", "/funding-source/initiate/verification", "/funding-source/verify",
	"/accounts/delete", "/ach-debit", "/check/send", "/webhooks", "/_sandbox/processor/token",
	"/_sandbox/processor/token/revoke",
}

// FuzzACHBody sends arbitrary bodies under arbitrary content types to
// every ACH endpoint with a body, of the exact and of the quirks mode.
// Whatever arrives, the answer is the ACH JSON envelope with a status
// below 500, the same in both modes, and no handler panics.
func FuzzACHBody(f *testing.F) {
	seeds := []struct {
		path  uint8
		ctype string
		body  string
	}{
		{0, typeJSON, `{"firstName":"A","lastName":"B","email":"a@b.c","phone":"1"}`},
		{1, typeJSON, `{"user_id":"x","routing_number":"999900001","account_number":"1234","account_type":"checking"}`},
		{2, typeForm, "user_id=x&routing_number=999900001&account_number=1111000016"},
		{3, typeJSON, `{"user_id":"x","processor_token":"processor-sandbox-x"}`},
		{6, typeJSON, `{"funding_source_id":"x","amounts":[0.07,"0.15"]}`},
		{6, typeJSON, `{"source_id":"x","amount1":1e999,"amount2":"-0"}`},
		{6, typeForm, "source_id=x&amounts[]=0.01&amounts=%zz"},
		{6, typeJSON, `{"source_id":"x","amounts":{"a":1}}`},
		{6, typeJSON, `{"source_id":"x","amounts":[[],null,"\ud800"]}`},
		{8, typeJSON, `{"sender":"x","amount":"90071992547409.93"}`},
		{10, typeJSON, `{"url":"http://[::1"}`},
		{11, typeJSON, `{"processor":"svcach","environment":"production","routing_number":999900001,"account_number":"1","subtype":"\u0000"}`},
		{0, typeJSON, `[]`}, {0, typeJSON, `{`}, {0, "text/plain", "x"}, {0, "", ""},
	}
	for _, s := range seeds {
		f.Add(s.path, s.ctype, []byte(s.body))
	}
	srvs := []*Server{New(Options{Seed: 1}), New(Options{Seed: 1, Quirks: true})}
	f.Fuzz(func(t *testing.T, pathIdx uint8, ctype string, body []byte) {
		path := ach(achFuzzPaths[int(pathIdx)%len(achFuzzPaths)])
		var statuses [2]int
		for i, srv := range srvs {
			w := &discardWriter{}
			req := newRequest(http.MethodPost, path, "sk_test_fuzz", "", body)
			req.Header["Content-Type"] = []string{ctype}
			srv.ServeHTTP(w, req)
			if w.status >= 500 || w.status == 0 {
				t.Fatalf("%s: status %d for %q %q: %s", path, w.status, ctype, body, w.body.String())
			}
			var env map[string]any
			if err := json.Unmarshal(w.body.Bytes(), &env); err != nil {
				t.Fatalf("%s: answer is not JSON: %q", path, w.body.String())
			}
			if ok, _ := env["success"].(bool); ok != (w.status == http.StatusOK) {
				t.Fatalf("%s: status %d with success %v", path, w.status, env["success"])
			}
			statuses[i] = w.status
		}
		if statuses[0] != statuses[1] {
			t.Fatalf("%s: status %d exact, %d quirks, for %q %q", path, statuses[0], statuses[1], ctype, body)
		}
	})
}

// FuzzACHQuery sends arbitrary query strings to the ACH GET endpoints
// that read one.
func FuzzACHQuery(f *testing.F) {
	for _, q := range []string{"", "page=2&limit=100", "limit=0", "page=99999999999999999999", "routing_number=999900001&account_number=1234",
		"routing_number=%zz", "account_number=1&account_number=2"} {
		f.Add(q)
	}
	srv := New(Options{})
	f.Fuzz(func(t *testing.T, q string) {
		for _, path := range []string{ach("/user"), ach("/accounts")} {
			w := &discardWriter{}
			req := newRequest(http.MethodGet, path, "sk_test_fuzz", "", nil)
			req.URL.RawQuery = q
			srv.ServeHTTP(w, req)
			if w.status != http.StatusOK && w.status != http.StatusBadRequest {
				t.Fatalf("%s?%s: status %d: %s", path, q, w.status, w.body.String())
			}
		}
	})
}
