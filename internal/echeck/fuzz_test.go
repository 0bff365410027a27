package echeck

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/batchd/batchd/internal/apiwire"
)

// FuzzDecodeAnswer feeds arbitrary bodies to every decoder the client runs
// on an answer. None may panic, an error excerpt stays bounded, and a check
// that decodes encodes back to itself.
func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range []string{
		`{"success":true,"check":` + checkJSON("12.34", `"1001"`) + `}`,
		`{"list":{"current_page":"1","last_page":"7","per_page":"15","total":"93","data":[` + checkJSON(`"0.29"`, `1`) + `]}}`,
		`{"list":{"data":{"1":{"check_id":"a"},"0":{"check_id":"b"}}}}`,
		`{"error":true,"message":"x","code":12,"errors":{"amount":["bad"]}}`,
		`{"check":{"basic_verification":{"pass_bv":"1"},"funds_confirmation":[]}}`,
		`{"tokenization":{"token":"t","last4":"123456"}}`,
		`{"checkout_link":{"checkout_token":"t","amount":"1e3"}}`,
		`{"check":{"amount":"1e999999"}}`,
		`{"check":{"check_id":"a","number":1001.0,"amount":12.340000000000001,"bank_account":"1......016"}}`,
		`{"check":{"check_id":"a","number":"0042","amount":0.285,"bank_account":"1234"}}`,
		`{"list":{"current_page":"1","from":0,"to":"2","last_page":2,"per_page":"15","total":23,"data":[` +
			checkJSON(`0.5700000000000001`, `1001`) + `]}}`,
		`{"checkout_link":{"checkout_token":"t","amount":25.990000000000002}}`,
		`<html>`, ``, `[]`, `null`, `{"a":`, "\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if msg, code := apiMessage(body, 500); len(msg) > 4*apiwire.MaxExcerpt || len(code) > 4*apiwire.MaxExcerpt {
			t.Fatalf("message of %d bytes", len(msg))
		}
		var c Check
		if json.Unmarshal(body, &c) == nil {
			out, err := json.Marshal(c)
			if err != nil {
				t.Fatalf("marshal %+v: %v", c, err)
			}
			var back Check
			if err := json.Unmarshal(out, &back); err != nil || !reflect.DeepEqual(c, back) {
				t.Fatalf("round trip of %q:\n%+v\n%s\n%+v, %v", body, c, out, back, err)
			}
		}
		m, err := apiwire.DecodeObject(body)
		if err != nil {
			return
		}
		errorFlagged(m)
		a := apiwire.Answer{Object: m, Body: body}
		_, _ = checkOf(envelopeOf(a, "check", "check_id"))
		if m, err := apiwire.DecodeObject(envelopeOf(a, "checkout_link", "checkout_token")); err == nil {
			_, _ = paymentLinkFrom(m)
		}
		_, _, _ = entries(a, (*checkWire).check)
		_, _, _ = entries(a, paymentLinkEntry)
	})
}
