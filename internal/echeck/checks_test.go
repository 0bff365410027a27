package echeck

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/money"
)

func TestAmountRoundTrip(t *testing.T) {
	for _, cents := range []money.Cents{1, 29, 123456789} {
		for _, quoted := range []bool{false, true} {
			wire := cents.String()
			if quoted {
				wire = `"` + wire + `"`
			}
			srv, rec := fakeService(t, reply(200, `{"success":true,"check":`+checkJSON(wire, `"1001"`)+`}`))
			c := newTestClient(t, srv.URL)
			ch, err := c.CreateCheck(context.Background(), CheckRequest{Amount: cents, Memo: "m"})
			if err != nil {
				t.Fatalf("create %s: %v", cents, err)
			}
			if ch.Amount != cents {
				t.Errorf("answer amount %s read as %d cents, want %d", wire, ch.Amount, cents)
			}
			// The request carries the amount as a JSON number with exactly
			// the digits of the decimal, never a float rendering.
			d := json.NewDecoder(bytes.NewReader(rec.last(t).Body))
			d.UseNumber()
			var body map[string]any
			if err := d.Decode(&body); err != nil {
				t.Fatal(err)
			}
			if n, ok := body["amount"].(json.Number); !ok || n.String() != cents.String() {
				t.Errorf("request amount = %#v, want the number %s", body["amount"], cents)
			}
		}
	}
}

func TestLenientCheckDecoding(t *testing.T) {
	base := map[string]string{
		"check_id": `"` + testID + `"`, "amount": `12.34`, "number": `"1001"`, "status": `"in_process"`,
	}
	with := func(extra map[string]string) []byte {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		parts := make([]string, 0, len(m))
		for k, v := range m {
			parts = append(parts, `"`+k+`":`+v)
		}
		return []byte("{" + strings.Join(parts, ",") + "}")
	}
	cases := []struct {
		name  string
		extra map[string]string
		check func(Check) bool
	}{
		{"number as number", map[string]string{"number": `1001`}, func(c Check) bool { return c.Number == "1001" }},
		{"amount as string", map[string]string{"amount": `"0.29"`}, func(c Check) bool { return c.Amount == 29 }},
		{"amount as float artefact", map[string]string{"amount": `0.29000000000000004`}, func(c Check) bool { return c.Amount == 29 }},
		{"unknown fields", map[string]string{"future": `{"a":[1,2]}`, "x": `null`}, func(c Check) bool { return c.CheckID == testID }},
		{"pass_bv 1", map[string]string{"basic_verification": `{"risk_bv":"Pass","pass_bv":1,"code_bv":"RT01"}`},
			func(c Check) bool {
				return c.BasicVerification != nil && c.BasicVerification.Pass && c.BasicVerification.Code == "RT01"
			}},
		{"pass_bv string", map[string]string{"basic_verification": `{"risk_bv":"Pass","pass_bv":"1"}`},
			func(c Check) bool { return c.BasicVerification.Pass && c.BasicVerification.Risk == "Pass" }},
		{"pass_bv true", map[string]string{"basic_verification": `{"pass_bv":true}`},
			func(c Check) bool { return c.BasicVerification.Pass }},
		{"pass_bv 0", map[string]string{"basic_verification": `{"risk_bv":"Fail","pass_bv":"0"}`},
			func(c Check) bool { return !c.BasicVerification.Pass && c.BasicVerification.Risk == "Fail" }},
		{"pass_bv odd", map[string]string{"basic_verification": `{"risk_bv":"Risky","pass_bv":"Risky"}`},
			func(c Check) bool { return !c.BasicVerification.Pass && c.BasicVerification.Risk == "Risky" }},
		{"empty verification", map[string]string{"basic_verification": `[]`, "funds_confirmation": `null`},
			func(c Check) bool { return c.BasicVerification == nil && c.FundsConfirmation == nil }},
		{"funds confirmation", map[string]string{"funds_confirmation": `{"verification_fc":"SufficientFunds","pass_fc":"1","description_fc":"ok"}`},
			func(c Check) bool {
				return c.FundsConfirmation != nil && c.FundsConfirmation.Pass && c.FundsConfirmation.Verification == "SufficientFunds"
			}},
		{"recurring as strings", map[string]string{"recurring": `"1"`, "recurring_installments": `"3"`, "recurring_cycle": `"month"`},
			func(c Check) bool { return c.Recurring && c.RecurringInstallments == 3 && c.RecurringCycle == "month" }},
		{"odd peripheral types", map[string]string{"recurring_installments": `"many"`, "memo": `{"a":1}`, "zip": `12345`},
			func(c Check) bool { return c.RecurringInstallments == 0 && c.Memo == "" && c.Zip == "12345" }},
		{"unmasked account is masked", map[string]string{"bank_account": `"1111000016"`},
			func(c Check) bool { return c.BankAccount == "****0016" }},
		{"masked account kept", map[string]string{"bank_account": `"1..........016"`},
			func(c Check) bool { return c.BankAccount == "1..........016" }},
		{"null amount", map[string]string{"amount": `null`}, func(c Check) bool { return c.Amount == 0 }},
	}
	for _, tc := range cases {
		var c Check
		if err := json.Unmarshal(with(tc.extra), &c); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !tc.check(c) {
			t.Errorf("%s: decoded %+v", tc.name, c)
		}
	}
	for name, extra := range map[string]map[string]string{
		"garbage amount":    {"amount": `"12,34"`},
		"object check_id":   {"check_id": `{"id":1}`},
		"array status":      {"status": `["x"]`},
		"boolean amount":    {"amount": `true`},
		"negative exponent": {"amount": `"1e-999999999"`},
	} {
		var c Check
		if err := json.Unmarshal(with(extra), &c); err == nil {
			t.Errorf("%s: decoded without error: %+v", name, c)
		}
	}
}

func TestCheckJSONRoundTrip(t *testing.T) {
	in := `{"check_id":"` + testID + `","number":1001,"amount":"1234567.89","status":"deposited","recurring":"1",` +
		`"basic_verification":{"risk_bv":"Pass","pass_bv":1},"funds_confirmation":{"verification_fc":"Null","pass_fc":0}}`
	var a, b Check
	if err := json.Unmarshal([]byte(in), &a); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("round trip changed the check:\n%+v\n%+v", a, b)
	}
	if a.Amount != 123456789 || a.Number != "1001" || !a.Recurring {
		t.Errorf("decoded %+v", a)
	}
}

func TestListPaging(t *testing.T) {
	one := checkJSON("1234567.89", `"1001"`)
	cases := map[string]string{
		"strings":        `{"success":true,"list":{"current_page":"2","from":"1","to":"3","last_page":"7","per_page":"15","total":"93","data":[` + one + `]}}`,
		"numbers":        `{"success":true,"list":{"current_page":2,"last_page":7,"per_page":15,"total":93,"data":[` + one + `]}}`,
		"top level":      `{"current_page":2,"last_page":"7","per_page":15.0,"total":"93","data":[` + one + `]}`,
		"keyed data":     `{"list":{"current_page":"2","last_page":"7","per_page":"15","total":"93","data":{"0":` + one + `}}}`,
		"unknown fields": `{"success":true,"list":{"current_page":"2","last_page":"7","per_page":"15","total":"93","first_page_url":"x","links":[{}],"data":[` + one + `]}}`,
	}
	for name, body := range cases {
		srv, _ := fakeService(t, reply(200, body))
		c := newTestClient(t, srv.URL)
		p, err := c.ListChecks(context.Background(), ListParams{Page: 2})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want := Paging{CurrentPage: 2, LastPage: 7, PerPage: 15, Total: 93}
		if p.Paging != want || len(p.Checks) != 1 || p.Checks[0].Amount != 123456789 || p.Checks[0].CheckID != testID {
			t.Errorf("%s: page %+v", name, p)
		}
	}
	empty := map[string]string{
		"empty data": `{"list":{"current_page":"8","last_page":"7","per_page":"15","total":"93","data":[]}}`,
		"php empty":  `{"list":[]}`,
	}
	for name, body := range empty {
		srv, _ := fakeService(t, reply(200, body))
		c := newTestClient(t, srv.URL)
		p, err := c.ListChecks(context.Background(), ListParams{})
		if err != nil || len(p.Checks) != 0 {
			t.Errorf("%s: %+v, %v", name, p, err)
		}
	}
	for name, body := range map[string]string{
		"garbage page": `{"list":{"current_page":"two","data":[]}}`,
		"bad entry":    `{"list":{"data":[` + checkJSON(`"x"`, `"1"`) + `]}}`,
		"scalar entry": `{"list":{"data":[1]}}`,
		"scalar data":  `{"list":{"data":5}}`,
	} {
		srv, _ := fakeService(t, reply(200, body))
		c := newTestClient(t, srv.URL)
		if _, err := c.ListChecks(context.Background(), ListParams{}); apiwire.ClassOf(err) != apiwire.Permanent {
			t.Errorf("%s: %v, want Permanent", name, err)
		}
	}
}

func TestBankInfoShapes(t *testing.T) {
	cases := map[string]string{
		"top level":    `{"success":true,"bank_name":"Test Bank","bank_routing":"999900001","bank_city":"Springfield"}`,
		"nested":       `{"success":true,"bank_info":{"name":"Test Bank","routing":999900001,"city":"Springfield"}}`,
		"bank object":  `{"bank":{"bank_name":"Test Bank","city":"Springfield"}}`,
		"bank as name": `{"bank":"Test Bank","city":"Springfield"}`,
	}
	for name, body := range cases {
		srv, _ := fakeService(t, reply(200, body))
		c := newTestClient(t, srv.URL)
		info, err := c.BankInfo(context.Background(), testRouting)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if info.Name != "Test Bank" || info.Routing != testRouting || info.City != "Springfield" || len(info.Raw) == 0 {
			t.Errorf("%s: %+v", name, info)
		}
	}
}

func TestPaymentLinksAndTokenization(t *testing.T) {
	srv, _ := fakeService(t, func(w http.ResponseWriter, r *http.Request, b []byte) {
		if r.URL.Path == "/v1/paymentlink/list" {
			reply(200, `{"list":{"current_page":"1","last_page":"1","per_page":"15","total":"2","data":[`+
				`{"checkout_token":"`+testToken+`","amount":"0.29","memo":"a","status":"active"},`+
				`{"checkout_token":"`+testID+`","amount":1234567.89}]}}`)(w, r, b)
			return
		}
		okAnswers(w, r, b)
	})
	c := newTestClient(t, srv.URL)
	ctx := context.Background()
	l, err := c.CreatePaymentLink(ctx, PaymentLinkRequest{Amount: 500})
	if err != nil || l.CheckoutToken != testToken || l.Amount != 500 || l.Link == "" || l.Memo != "dues" {
		t.Errorf("create: %+v, %v", l, err)
	}
	p, err := c.ListPaymentLinks(ctx, ListParams{})
	if err != nil || p.Total != 2 || len(p.Links) != 2 || p.Links[0].Amount != 29 || p.Links[1].Amount != 123456789 || p.Links[0].Status != "active" {
		t.Errorf("list: %+v, %v", p, err)
	}
	tok, err := c.Tokenize(ctx, TokenizeRequest{BankAccount: testAccount})
	if err != nil || *tok != (Tokenization{Token: testToken, Bank: "Test Bank", Routing: testRouting, Last4: "0016", Name: "Ann Lee"}) {
		t.Errorf("tokenize: %+v, %v", tok, err)
	}
}

func TestAnswerForAnotherCheckIsRefused(t *testing.T) {
	other := strings.Replace(checkJSON("1", `"1"`), testID, "00000000-0000-4000-8000-000000000000", 1)
	srv, _ := fakeService(t, reply(200, `{"check":`+other+`}`))
	c := newTestClient(t, srv.URL)
	if _, err := c.GetCheck(context.Background(), testID); apiwire.ClassOf(err) != apiwire.Permanent {
		t.Errorf("get answered with another check: %v, want Permanent", err)
	}
}
