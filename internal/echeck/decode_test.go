package echeck

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/apiwire"
)

// decodeListAnswer runs every decoding step ListChecks takes after the
// body has been read.
func decodeListAnswer(body []byte) (Paging, []Check, error) {
	m, err := apiwire.DecodeObject(body)
	if err != nil {
		return Paging{}, nil, err
	}
	if errorFlagged(m) {
		return Paging{}, nil, fmt.Errorf("flagged as an error")
	}
	return entries(apiwire.Answer{Object: m, Body: body}, (*checkWire).check)
}

// decoderSeeds are answers of every shape the tests know, odd ones
// included; FuzzDecodeMatchesReference starts from them.
func decoderSeeds(tb testing.TB) []string {
	one := checkJSON("1234567.89", `"1001"`)
	return []string{
		string(sandboxListPage(tb, 2, 3)),
		`{"success":true,"check":` + checkJSON("12.34", `"1001"`) + `}`,
		`{"success":true,"list":{"current_page":"2","from":"1","to":"3","last_page":"7","per_page":"15","total":"93","data":[` + one + `]}}`,
		`{"current_page":2,"last_page":"7","per_page":15.0,"total":"93","data":[` + one + `]}`,
		`{"list":{"current_page":"2","last_page":"7","per_page":"15","total":"93","data":{"1":` + one + `,"0":{"check_id":"b","amount":"0.29"}}}}`,
		`{"list":{"data":{"10":{"check_id":"c"},"9":{"check_id":"b"},"x":{"check_id":"a"}}}}`,
		`{"list":[]}`, `{"list":{}}`, `{"list":[` + one + `]}`, `{"list":{"data":[]}}`, `{"list":{"data":[{}]}}`,
		`{"list":{"data":5}}`, `{"list":{"data":[1]}}`, `{"list":{"current_page":"two","data":[]}}`,
		`{"list":{"current_page":" 3 ","last_page":"3.0","per_page":1e2,"total":null,"data":""}}`,
		`{"list":{"data":[{"check_id":"a","amount":"x"}]}}`,
		`{"error":true,"message":"x"}`, `{"success":false}`, `{"success":"0","list":[]}`, `{"error":"","list":[]}`,
		`{"check_id":"a","number":1001,"amount":"0.29","label":"l","status":"in_process","recurring":"1","recurring_installments":"3"}`,
		`{"check_id":"a","amount":0.29000000000000004,"memo":{"a":1},"zip":12345,"recurring_installments":"many"}`,
		`{"check_id":"a","amount":"12,34"}`, `{"check_id":{"id":1}}`, `{"status":["x"]}`, `{"amount":true}`,
		`{"amount":"1e-999999999"}`, `{"amount":"1e2"}`, `{"amount":"-0.015"}`, `{"amount":"007.10"}`, `{"amount":" 12.5 "}`,
		`{"amount":"12\u002e5"}`, `{"amount":.5}`, `{"amount":"5."}`, `{"amount":123456789012345.67}`,
		`{"amount":"1234567890123456.7"}`, `{"amount":92233720368547758.07}`, `{"amount":[]}`, `{"amount":""}`,
		`{"check\u005fid":"escaped key","amount":1}`, `{"check_id":"a","check_id":"b","amount":"x","amount":2}`,
		`{"Check_ID":{"a":1},"check_id":"a","AMOUNT":"x"}`,
		`{"check_id":"caf\u00e9 \"quoted\" \\ tab\t","memo":"café","name":"\ud83d\ude00","email":"bad \xff utf8"}`,
		"{\"check_id\":\"a\",\"memo\":\"\xff\xfe\",\"\xff\":1}",
		` { "check_id" : "a" , "amount" : 1.5 , "bank_account" : "1111000016" } `,
		`{"bank_account":"1..........016"}`, `{"bank_account":"acct 12-34-56"}`, `{"bank_account":1111000016}`,
		`{"basic_verification":{"risk_bv":"Pass","pass_bv":1,"code_bv":"RT01"},"funds_confirmation":[]}`,
		`{"basic_verification":{"pass_bv":"Risky"},"fund_confirmation":{"pass_fc":"yes"}}`,
		`{"basic_verification":{},"funds_confirmation":{},"fund_confirmation":{"pass_fc":true}}`,
		`{"basic_verification":"x","funds_confirmation":null}`,
		`{"recurring":"on","recurring_installments":"15.0","recurring_cycle":null,"recurring_start_date":false}`,
		`{"recurring":2.5e0,"recurring_installments":-3}`, `{"recurring":"TRUE","recurring_installments":1e300}`,
		`{"list":{"data":[[[[[[{"a":[1,{"b":"]}"}]}]]]]]]}}`,
		`{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
		// The shapes of the sandbox's Options.Quirks: float amounts,
		// numbers as JSON numbers, paging numbers mixed, masked accounts.
		`{"list":{"current_page":"1","from":0,"to":"2","last_page":2,"per_page":"15","total":23,"data":[` +
			checkJSON(`0.5700000000000001`, `1001`) + `,` + checkJSON(`12.340000000000001`, `"42"`) + `]}}`,
		`{"list":{"current_page":2,"from":"1","to":0,"last_page":"2","per_page":15,"total":"23","data":[` +
			checkJSON(`0.28999999999999998`, `1.001e3`) + `]}}`,
		`{"check_id":"a","number":1001.0,"amount":2.9000000000000004e-1,"bank_account":"1......016"}`,
		`{"check_id":"a","number":-7,"amount":0.285,"bank_account":"1.345"}`, `{"number":1001.5,"amount":"0.2900011"}`,
		`{"number":1e300,"amount":1234567.8900000001,"bank_account":"1234"}`, `{"amount":"-0.29000000000000004"}`,
		`{}`, `[]`, `null`, `""`, `1`, ``, ` `, `{`, `{"a":`, `{"a":1}x`, `{"a":1,}`, `{"a" 1}`, `<html>`, "\xff\xfe",
		`"text"`, `"caf\u00e9"`, `15`, `"15"`, `"15.0"`, `15.5`, `true`, `"1"`, `"0"`, `"yes"`, `[ ]`, `{ }`,
	}
}

// FuzzDecodeMatchesReference checks that the decoder agrees with the
// reference decoder of reference_test.go on any answer, alone and with the
// input placed where a check member, a paging number or the entry list
// goes: the same paging, the same checks, the same error text.
func FuzzDecodeMatchesReference(f *testing.F) {
	for _, s := range decoderSeeds(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		v := string(in)
		for _, body := range []string{
			v,
			`{"check_id":"a","number":` + v + `,"label":` + v + `}`,
			`{"list":{"current_page":` + v + `,"data":[{"check_id":"a","amount":` + v + `,"memo":` + v +
				`,"recurring":` + v + `,"recurring_installments":` + v + `,"basic_verification":` + v + `}]}}`,
			`{"list":{"total":"9","data":` + v + `}}`,
			`{"success":true,"list":` + v + `}`,
			`{"error":` + v + `,"success":` + v + `,"data":[]}`,
		} {
			compareDecoders(t, []byte(body))
		}
		compareValues(t, in)
		compareScanner(t, in)
	})
}

func compareDecoders(t *testing.T, body []byte) {
	t.Helper()
	pg, checks, err := decodeListAnswer(body)
	rpg, rchecks, rerr := refListAnswer(body)
	if errText(err) != errText(rerr) || pg != rpg || !reflect.DeepEqual(checks, rchecks) {
		t.Fatalf("list answer %q:\n got %+v %+v %v\nwant %+v %+v %v", body, pg, checks, err, rpg, rchecks, rerr)
	}
	var c Check
	err = c.UnmarshalJSON(body)
	rc, rerr := refCheckUnmarshal(body)
	if errText(err) != errText(rerr) || (err == nil && !reflect.DeepEqual(c, rc)) {
		t.Fatalf("check %q:\n got %+v %v\nwant %+v %v", body, c, err, rc, rerr)
	}
	if m, err := apiwire.DecodeObject(body); err == nil {
		rm, _ := refDecodeObject(body)
		rc, rerr := refCheckFrom(rm)
		if c, err := checkOf(body); errText(err) != errText(rerr) ||
			!reflect.DeepEqual(c, rc) {
			t.Fatalf("checkOf %q:\n got %+v %v\nwant %+v %v", body, c, err, rc, rerr)
		}
		if errorFlagged(m) != refErrorFlagged(rm) {
			t.Fatalf("errorFlagged %q = %v", body, errorFlagged(m))
		}
	}
}

// compareValues reads in as each lenient type, old and new. (The old
// integer and boolean readers panicked on an empty value; no answer has one.)
func compareValues(t *testing.T, in []byte) {
	t.Helper()
	if len(bytes.TrimSpace(in)) == 0 {
		return
	}
	var s refString
	got, err := apiwire.Text(in)
	if rerr := s.UnmarshalJSON(in); errText(err) != errText(rerr) || (err == nil && got != string(s)) {
		t.Fatalf("text %q = %q, %v; want %q, %v", in, got, err, s, rerr)
	}
	var n refInt
	gotN, err := apiwire.Integer(in)
	if rerr := n.UnmarshalJSON(in); errText(err) != errText(rerr) || (err == nil && gotN != int64(n)) {
		t.Fatalf("integer %q = %d, %v; want %d, %v", in, gotN, err, n, rerr)
	}
	var b refBool
	gotB, err := apiwire.Bool(in)
	if rerr := b.UnmarshalJSON(in); errText(err) != errText(rerr) || (err == nil && gotB != bool(b)) {
		t.Fatalf("bool %q = %v, %v; want %v, %v", in, gotB, err, b, rerr)
	}
	var c refCents
	gotC, err := apiwire.Cents(in)
	if rerr := c.UnmarshalJSON(in); errText(err) != errText(rerr) || (err == nil && int64(gotC) != int64(c)) {
		t.Fatalf("cents %q = %d, %v; want %d, %v", in, gotC, err, c, rerr)
	}
}

// compareScanner hands in, unchecked, to the readers that expect a valid
// value, which must not panic. (apiwire's FuzzObject checks that they
// split valid JSON as encoding/json does.)
func compareScanner(t *testing.T, in []byte) {
	t.Helper()
	_, _ = apiwire.ListOf(in)
	_, _ = apiwire.ObjectOf(in)
	var w checkWire
	_ = apiwire.Unmarshal(in, &w)
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
