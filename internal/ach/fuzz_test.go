package ach

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/batchd/batchd/internal/apiwire"
)

// FuzzDecodeAnswer feeds arbitrary bodies to every decoder the client runs
// on an answer. None may panic; a message stays a bounded, valid line (an
// invalid byte becomes a 3-byte U+FFFD, hence the factor 3); no
// Last4 is longer than four characters; a status is read the same way
// twice.
func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range []string{
		`{"success":true,"user_id":"u","user":` + userJSON + `}`,
		`{"success":true,"list":{"current_page":"1","last_page":2,"data":[{"id":"u","sources":[{"id":"s","status":"pending","is_primary":1}]}]}}`,
		`{"success":true,"list":{"data":{"1":{"user_id":"b"},"0":{"user_id":"a"}}}}`,
		`{"success":true,"funding_source_id":"s","status":"Pending","funding_source":` + sourceJSON + `}`,
		`{"success":true,"list":[{"id":"s","status":"deleted","lbacc":"123456789"}]}`,
		`{"success":false,"error":true,"code":"INVALID_PROCESSOR_TOKEN","message":"INVALID_PROCESSOR_TOKEN: revoked"}`,
		`{"success":false,"messages":["a","b"]}`, `{"messages":{"b":["x"],"a":"y"}}`,
		`{"available":"0","user_id":12}`, `{"check":{"check_id":1e3}}`,
		`{"list":{"current_page":1e99}}`, `{"user":{"user_id":{"a":1}}}`,
		`<html>`, ``, `[]`, `null`, `{"a":`, "\xff\xfe", `{"error":"\u0000"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, code, _ := apiMessage(body, 500)
		for _, s := range []string{msg, code} {
			if len(s) > 3*apiwire.MaxExcerpt+len("…") || !utf8.ValidString(s) || strings.ContainsAny(s, "\n\r\t") {
				t.Fatalf("message %q", s)
			}
		}
		m, err := apiwire.DecodeObject(body)
		if err != nil {
			return
		}
		errorFlagged(m)
		_ = kindsOf(400, code, msg)
		if u, err := userOf(m); err == nil {
			for _, s := range u.Sources {
				checkSource(t, s)
			}
		}
		if s, err := sourceOf(m); err == nil {
			checkSource(t, s)
		}
		if _, items, err := pageOf(m); err == nil {
			for _, it := range items {
				if o, ok := apiwire.ObjectOf(it); ok {
					userFrom(o)
					if s, err := sourceFrom(o); err == nil {
						checkSource(t, s)
					}
				}
			}
		}
		if d, ok := apiwire.ParseRetryAfter(string(body), time.Unix(0, 0)); d < 0 || d > apiwire.MaxRetryAfter || (!ok && d != 0) {
			t.Fatalf("parseRetryAfter = %s %v", d, ok)
		}
	})
}

func checkSource(t *testing.T, s FundingSource) {
	t.Helper()
	if len(s.Last4) > 4 {
		t.Fatalf("Last4 %q longer than four", s.Last4)
	}
	if ParseStatus(s.StatusText) != s.Status {
		t.Fatalf("status %q read as %v and then %v", s.StatusText, s.Status, ParseStatus(s.StatusText))
	}
}
