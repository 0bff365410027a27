package echeck

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/money"
)

// The tests below decode the answers of a service less tidy than the
// exact sandbox (the sandbox's Options.Quirks, after public-api-notes.md):
// amounts as float64 renderings, numbers without leading zeros and as
// JSON numbers, paging numbers mixed as strings and numbers, and a bank
// account masked as first digit, dots, last three.

// TestFloatArtefactAmounts: an amount a service computed in float64 reads
// as exactly the cents it stands for, in a check, a list entry and a
// payment link; a real fraction of a cent is refused, with an error that
// says why and names the field.
func TestFloatArtefactAmounts(t *testing.T) {
	ok := map[string]money.Cents{
		`0.29000000000000004`: 29, `12.340000000000001`: 1234, `0.5700000000000001`: 57,
		`19.990000000000002`: 1999, `4.3500000000000005`: 435, `1234567.8900000001`: 123456789,
		`0.28999999999999998`: 29, `"0.29000000000000004"`: 29, `2.9000000000000004e-1`: 29, `1.2345e3`: 123450,
	}
	for wire, want := range ok {
		var c Check
		if err := json.Unmarshal([]byte(checkJSON(wire, `"1001"`)), &c); err != nil || c.Amount != want {
			t.Errorf("check amount %s: %d, %v; want %d", wire, c.Amount, err, want)
		}
		_, checks, err := decodeListAnswer([]byte(`{"list":{"current_page":1,"data":[` + checkJSON(wire, `1001`) + `]}}`))
		if err != nil || len(checks) != 1 || checks[0].Amount != want {
			t.Errorf("listed amount %s: %+v, %v; want %d", wire, checks, err, want)
		}
	}
	for _, wire := range []string{`0.285`, `12.345`, `"0.2900011"`, `1.5e-3`} {
		var c Check
		err := json.Unmarshal([]byte(checkJSON(wire, `"1001"`)), &c)
		if !errors.Is(err, money.ErrSubCent) || !strings.Contains(err.Error(), `field "amount"`) ||
			!strings.Contains(err.Error(), "not a float rounding artefact") {
			t.Errorf("check amount %s: %v; want a refusal naming the amount as a real fraction of a cent", wire, err)
		}
	}
	srv, _ := fakeService(t, reply(200, `{"success":true,"checkout_link":{"checkout_token":"`+testToken+`","amount":25.990000000000002}}`))
	l, err := newTestClient(t, srv.URL).CreatePaymentLink(context.Background(), PaymentLinkRequest{Amount: 2599})
	if err != nil || l.Amount != 2599 {
		t.Errorf("payment link amount 25.990000000000002: %+v, %v; want 2599", l, err)
	}
}

// TestNumberShapes: a check number arrives as a string or as a JSON
// number, also in a float form; a JSON number is read as plain digits, a
// string as sent (leading zeros kept: the decoder does not compare).
func TestNumberShapes(t *testing.T) {
	for wire, want := range map[string]string{
		`"1001"`: "1001", `1001`: "1001", `1001.0`: "1001", `1.001e3`: "1001", `0`: "0",
		`"0001001"`: "0001001", `" 42 "`: "42", `9999999999`: "9999999999",
		`1001.5`: "1001.5", `-3`: "-3", `null`: "", `[]`: "",
	} {
		var c Check
		if err := json.Unmarshal([]byte(checkJSON("1", wire)), &c); err != nil || c.Number != want {
			t.Errorf("number %s: %q, %v; want %q", wire, c.Number, err, want)
		}
	}
	var c Check
	if err := json.Unmarshal([]byte(checkJSON("1", `{"n":1}`)), &c); err == nil {
		t.Errorf("number as an object decoded as %q", c.Number)
	}
}

// TestMixedPagingNumbers: within one list answer some paging numbers are
// strings and others numbers, alternating from page to page.
func TestMixedPagingNumbers(t *testing.T) {
	one := checkJSON("0.5700000000000001", `1001`)
	for i, body := range []string{
		`{"success":true,"list":{"current_page":"1","from":0,"to":"2","last_page":2,"per_page":"15","total":23,"data":[` + one + `]}}`,
		`{"success":true,"list":{"current_page":2,"from":"1","to":0,"last_page":"2","per_page":15,"total":"23","data":[` + one + `]}}`,
	} {
		pg, checks, err := decodeListAnswer([]byte(body))
		want := Paging{CurrentPage: i + 1, LastPage: 2, PerPage: 15, Total: 23}
		if err != nil || pg != want || len(checks) != 1 || checks[0].Amount != 57 || checks[0].Number != "1001" {
			t.Errorf("page %d: %+v %+v, %v; want %+v", i+1, pg, checks, err, want)
		}
	}
}

// TestMaskedAccounts: the service's mask (first digit, dots, last three,
// the account's length) is kept where it hides most of the account, and
// masked again where it would show most or all of a short one.
func TestMaskedAccounts(t *testing.T) {
	for wire, want := range map[string]string{
		`"1..........876"`: "1..........876", `"1......016"`: "1......016", `"1...678"`: "****78",
		`"****0016"`: "****0016", `"1.345"`: "****45", `"1234"`: "****34", `"12.456"`: "****56",
		`"1111000016"`: "****0016", `1111000016`: "****0016", `""`: "", `"x"`: "x",
	} {
		var c Check
		if err := json.Unmarshal([]byte(`{"check_id":"a","bank_account":`+wire+`}`), &c); err != nil || c.BankAccount != want {
			t.Errorf("bank_account %s: %q, %v; want %q", wire, c.BankAccount, err, want)
		}
	}
	// The mask never shows more digits than the account's own last four.
	for n := 4; n <= 17; n++ {
		acct := strings.Repeat("9", n-4) + "1234"
		quirk := acct[:1] + strings.Repeat(".", n-4) + acct[n-3:]
		var c Check
		if err := json.Unmarshal([]byte(`{"check_id":"a","bank_account":`+strconv.Quote(quirk)+`}`), &c); err != nil {
			t.Fatal(err)
		}
		digits := 0
		for _, r := range c.BankAccount {
			if r >= '0' && r <= '9' {
				digits++
			}
		}
		if digits > 4 || 2*digits > n {
			t.Errorf("account of %d digits masked %q reads as %q", n, quirk, c.BankAccount)
		}
	}
}
