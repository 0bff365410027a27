package sandbox

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestCreateValidation(t *testing.T) {
	h := newHarness(t, Options{})
	day := func(offset int) string { return monday().AddDate(0, 0, offset).Format(dateLayout) }
	addr := map[string]any{"email": nil, "address": "1 Main St", "city": "Springfield", "state": "IL", "zip": "62701"}
	withAddr := func(changes map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range addr {
			m[k] = v
		}
		for k, v := range changes {
			m[k] = v
		}
		return m
	}
	tokenPair := map[string]any{"bank_routing": nil, "bank_account": nil}
	cases := []struct {
		name    string
		changes map[string]any
		field   string // "" means success
	}{
		{"valid", nil, ""},
		{"memo 128", map[string]any{"memo": strings.Repeat("m", 128)}, ""},
		{"memo 129", map[string]any{"memo": strings.Repeat("m", 129)}, "memo"},
		{"memo 128 runes multibyte", map[string]any{"memo": strings.Repeat("é", 128)}, ""},
		{"memo missing", map[string]any{"memo": nil}, "memo"},
		{"memo blank", map[string]any{"memo": "   "}, "memo"},
		{"name 80", map[string]any{"name": strings.Repeat("n", 80)}, ""},
		{"name 81", map[string]any{"name": strings.Repeat("n", 81)}, "name"},
		{"name missing", map[string]any{"name": nil}, "name"},
		{"email 80", map[string]any{"email": strings.Repeat("e", 68) + "@example.com"}, ""},
		{"email 81", map[string]any{"email": strings.Repeat("e", 69) + "@example.com"}, "email"},
		{"email no at", map[string]any{"email": "ada.example.com"}, "email"},
		{"amount missing", map[string]any{"amount": nil}, "amount"},
		{"amount zero", map[string]any{"amount": 0}, "amount"},
		{"amount negative", map[string]any{"amount": "-1.00"}, "amount"},
		{"amount three decimals", map[string]any{"amount": "1.234"}, "amount"},
		{"amount trailing zero decimals", map[string]any{"amount": "1.500"}, ""},
		{"amount json number", map[string]any{"amount": json.Number("12.34")}, ""},
		{"amount one cent", map[string]any{"amount": json.Number("0.01")}, ""},
		{"amount exponent", map[string]any{"amount": json.Number("1e3")}, "amount"},
		{"amount text", map[string]any{"amount": "ten"}, "amount"},
		{"amount bool", map[string]any{"amount": true}, "amount"},
		{"routing 8", map[string]any{"bank_routing": "99990000"}, "bank_routing"},
		{"routing 10", map[string]any{"bank_routing": "9999000011"}, "bank_routing"},
		{"routing letters", map[string]any{"bank_routing": "99990000x"}, "bank_routing"},
		{"routing json number", map[string]any{"bank_routing": 999900001}, "bank_routing"},
		{"account 3", map[string]any{"bank_account": "123"}, "bank_account"},
		{"account 4", map[string]any{"bank_account": "1234"}, ""},
		{"account 17", map[string]any{"bank_account": strings.Repeat("1", 17)}, ""},
		{"account 18", map[string]any{"bank_account": strings.Repeat("1", 18)}, "bank_account"},
		{"auth date today", map[string]any{"authorization_date": day(0)}, ""},
		{"auth date 30 days old", map[string]any{"authorization_date": day(-30)}, ""},
		{"auth date 31 days old", map[string]any{"authorization_date": day(-31)}, "authorization_date"},
		{"auth date tomorrow", map[string]any{"authorization_date": day(1)}, "authorization_date"},
		{"auth date format", map[string]any{"authorization_date": "2026-3-2"}, "authorization_date"},
		{"address with city state zip, no email", withAddr(nil), ""},
		{"no email no address", map[string]any{"email": nil}, "email"},
		{"address without city", withAddr(map[string]any{"city": nil}), "city"},
		{"address without state", withAddr(map[string]any{"state": nil}), "state"},
		{"address without zip", withAddr(map[string]any{"zip": nil}), "zip"},
		{"address 129", withAddr(map[string]any{"address": strings.Repeat("a", 129)}), "address"},
		{"city 41", withAddr(map[string]any{"city": strings.Repeat("c", 41)}), "city"},
		{"state 1", withAddr(map[string]any{"state": "I"}), "state"},
		{"state 3", withAddr(map[string]any{"state": "ILL"}), "state"},
		{"zip 4", withAddr(map[string]any{"zip": "1234"}), "zip"},
		{"zip 5", withAddr(map[string]any{"zip": "12345"}), ""},
		{"zip 10", withAddr(map[string]any{"zip": "12345-6789"}), ""},
		{"zip 11", withAddr(map[string]any{"zip": "12345-67890"}), "zip"},
		{"phone 20", map[string]any{"phone": strings.Repeat("5", 20)}, ""},
		{"phone 21", map[string]any{"phone": strings.Repeat("5", 21)}, "phone"},
		{"label 128", map[string]any{"label": strings.Repeat("l", 128)}, ""},
		{"label 129", map[string]any{"label": strings.Repeat("l", 129)}, "label"},
		{"type_info 129", map[string]any{"type_info": strings.Repeat("t", 129)}, "type_info"},
		{"number 10 digits", map[string]any{"number": "0123456789"}, ""},
		{"number 11 digits", map[string]any{"number": "01234567890"}, "number"},
		{"number letters", map[string]any{"number": "12a"}, "number"},
		{"number json number", map[string]any{"number": 42}, ""},
		{"routing without account", map[string]any{"bank_account": nil}, "bank_account"},
		{"account without routing", map[string]any{"bank_routing": nil}, "bank_routing"},
		{"no bank data", tokenPair, "bank_routing"},
		{"token without store", merge(tokenPair, map[string]any{"token": strings.Repeat("t", 36)}), "store"},
		{"store without token", merge(tokenPair, map[string]any{"store": "shop"}), "token"},
		{"token 35", merge(tokenPair, map[string]any{"token": strings.Repeat("t", 35), "store": "shop"}), "token"},
		{"token and bank data", map[string]any{"token": strings.Repeat("t", 36), "store": "shop"}, "token"},
		{"store 129", merge(tokenPair, map[string]any{"token": strings.Repeat("t", 36), "store": strings.Repeat("s", 129)}), "store"},
		{"recurring 2", map[string]any{"recurring": 2}, "recurring"},
		{"recurring without cycle", map[string]any{"recurring": 1}, "recurring_cycle"},
		{"recurring with cycle", map[string]any{"recurring": "1", "recurring_cycle": "bi-weekly"}, ""},
		{"cycle unknown", map[string]any{"recurring_cycle": "year"}, "recurring_cycle"},
		{"start date NULL", map[string]any{"recurring_start_date": "NULL"}, ""},
		{"start date bad", map[string]any{"recurring_start_date": "2026-13-01"}, "recurring_start_date"},
		{"installments -1", map[string]any{"recurring_installments": -1}, "recurring_installments"},
		{"installments text", map[string]any{"recurring_installments": "3"}, ""},
		{"installments fraction", map[string]any{"recurring_installments": 1.5}, "recurring_installments"},
		{"verify yes", map[string]any{"verify_before_save": "yes"}, "verify_before_save"},
		{"verify 1", map[string]any{"verify_before_save": 1}, ""},
		{"verify \"0\"", map[string]any{"verify_before_save": "0"}, ""},
		{"fund true", map[string]any{"fund_confirmation": true}, ""},
		{"memo wrong type", map[string]any{"memo": 5}, "memo"},
		{"null optional", map[string]any{"phone": nil, "label": json.RawMessage("null")}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.post("/v1/check/create", keyA, with(tc.changes))
			if tc.field == "" {
				wantStatus(t, r, http.StatusOK)
				return
			}
			wantField(t, r, tc.field)
			if strings.Contains(string(r.raw), strings.Repeat("1", 17)) || strings.Contains(string(r.raw), "1111000016") {
				t.Errorf("error echoes the account number: %s", r.raw)
			}
		})
	}
}

func merge(a, b map[string]any) map[string]any {
	m := map[string]any{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

func TestCreateBodies(t *testing.T) {
	h := newHarness(t, Options{MaxBodyBytes: 1024})
	form := "amount=5.00&memo=Rent&name=Bob&email=bob%40example.com&bank_routing=999900001&bank_account=1111000008&verify_before_save=true&number=77"
	jsonBody := `{"amount":5,"memo":"Rent","name":"Bob","email":"bob@example.com","bank_routing":"999900001","bank_account":"1111000008"}`
	cases := []struct {
		name, ctype, body string
		status            int
	}{
		{"form", typeForm, form, http.StatusOK},
		{"form with charset", typeForm + "; charset=utf-8", form, http.StatusOK},
		{"json", typeJSON, jsonBody, http.StatusOK},
		{"json, no content type", "", jsonBody, http.StatusOK},
		{"form, no content type", "", form, http.StatusOK},
		{"text/plain", "text/plain", jsonBody, http.StatusBadRequest},
		{"multipart", "multipart/form-data; boundary=x", form, http.StatusBadRequest},
		{"broken content type", "application/", jsonBody, http.StatusBadRequest},
		{"malformed json", typeJSON, `{"amount": 5,`, http.StatusBadRequest},
		{"json array", typeJSON, `[1,2]`, http.StatusBadRequest},
		{"json null", typeJSON, `null`, http.StatusBadRequest},
		{"json trailing garbage", typeJSON, jsonBody + `x`, http.StatusBadRequest},
		{"empty json body", typeJSON, ``, http.StatusBadRequest},
		{"malformed form", typeForm, "amount=%zz", http.StatusBadRequest},
		{"oversized", typeJSON, `{"memo":"` + strings.Repeat("x", 2000) + `"}`, http.StatusBadRequest},
		{"garbage, no content type", "", "\x00\xff{", http.StatusBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.send(http.MethodPost, "/v1/check/create", keyA, tc.ctype, tc.body)
			wantStatus(t, r, tc.status)
			if tc.status != http.StatusOK && r.body["error"] != true {
				t.Errorf("error envelope missing: %s", r.raw)
			}
		})
	}
	r := h.send(http.MethodPost, "/v1/check/create", keyA, typeForm, form)
	c := r.check()
	if c["number"] != "77" || c["basic_verification"].(map[string]any)["risk_bv"] != "Pass" {
		t.Errorf("form fields not applied: %s", r.raw)
	}
}

func TestCreateAnswerShape(t *testing.T) {
	h := newHarness(t, Options{})
	r := h.post("/v1/check/create", keyA, with(map[string]any{"label": "batch-7"}))
	wantStatus(t, r, http.StatusOK)
	if r.body["success"] != true || r.body["error"] != false {
		t.Fatalf("envelope: %s", r.raw)
	}
	c := r.check()
	id := c["check_id"].(string)
	if len(id) != 36 || strings.Count(id, "-") != 4 {
		t.Errorf("check_id %q is not a hyphenated UUID", id)
	}
	want := map[string]any{
		"date": "2026-03-02 10:00:00", "number": "1001", "amount": json.Number("12.34"),
		"status": statusInProcess, "bank_account": "****0016", "bank_routing": FixtureRouting,
		"bank_name": "Sandbox Test Bank", "authorization_date": "2026-03-02", "label": "batch-7",
		"recurring": json.Number("0"), "recurring_start_date": nil,
	}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("%s = %#v, want %#v", k, c[k], v)
		}
	}
	for _, k := range []string{"basic_verification", "funds_confirmation"} {
		if _, ok := c[k]; ok {
			t.Errorf("%s present although not asked for", k)
		}
	}
	if strings.Contains(string(r.raw), "1111000016") {
		t.Errorf("answer holds the full account number")
	}
	if next := h.create(keyA, nil); next["number"] != "1002" {
		t.Errorf("second automatic number %v, want 1002", next["number"])
	}
	if after := (h.create(keyA, map[string]any{"number": "5000"})); after["number"] != "5000" {
		t.Fatalf("chosen number not kept")
	}
	if next := h.create(keyA, nil); next["number"] != "5001" {
		t.Errorf("automatic number after a chosen 5000 is %v, want 5001", next["number"])
	}
}

func TestFixtures(t *testing.T) {
	h := newHarness(t, Options{})
	type row struct{ risk, funds string }
	table := []row{
		{"Risky", "InsufficientFunds"}, {"Fail", "NonParticipatingBank"}, {"Risky", "AccountClosed"},
		{"Fail", "NonParticipatingBank"}, {"Fail", "InvalidAccountNumber"}, {"Risky", "Null"},
		{"Fail", "Null"}, {"Pass", "Null"}, {"Fail", "NonParticipatingBank"}, {"Pass", "SufficientFunds"},
		{"Risky", "InsufficientFunds"}, {"Fail", "InsufficientFunds"}, {"Risky", "InsufficientFunds"},
		{"Fail", "InsufficientFunds"}, {"Risky", "InsufficientFunds"}, {"Pass", "SufficientFunds"},
		{"Fail", "NonParticipatingBank"}, {"Pass", "SufficientFunds"}, {"Fail", "NonParticipatingBank"},
		{"Pass", "SufficientFunds"}, {"Fail", "NonParticipatingBank"}, {"Pass", "SufficientFunds"},
	}
	check := func(t *testing.T, routing, account string, want row) {
		t.Helper()
		c := h.create(keyA, map[string]any{"bank_routing": routing, "bank_account": account,
			"verify_before_save": true, "fund_confirmation": true})
		bv := c["basic_verification"].(map[string]any)
		fc := c["funds_confirmation"].(map[string]any)
		if bv["risk_bv"] != want.risk || fc["verification_fc"] != want.funds {
			t.Errorf("%s: got %v/%v, want %v", account[len(account)-2:], bv["risk_bv"], fc["verification_fc"], want)
		}
		if pass := bv["pass_bv"] == json.Number("1"); pass != (want.risk == "Pass") {
			t.Errorf("pass_bv %v for risk %s", bv["pass_bv"], want.risk)
		}
		if bv["code_bv"] == "" || bv["description_bv"] == "" || fc["description_fc"] == "" {
			t.Errorf("codes or descriptions missing: %v %v", bv, fc)
		}
		if c["status"] != statusInProcess {
			t.Errorf("status %v", c["status"])
		}
	}
	for i, want := range table {
		check(t, FixtureRouting, "11110000"+twoDigits(i+1), want)
	}
	check(t, FixtureRouting, "1111000023", row{"Fail", "InvalidAccountNumber"})
	check(t, "123456789", "1111000016", row{"Fail", "NonParticipatingBank"})
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

func TestFundConfirmationPlan(t *testing.T) {
	h := newHarness(t, Options{})
	r := h.post("/v1/check/create", keyBasic, with(map[string]any{"fund_confirmation": "1"}))
	wantStatus(t, r, http.StatusForbidden)
	if r.msg() != "Fund Confirmation Limit Reached" || r.body["error"] != true {
		t.Errorf("body %s", r.raw)
	}
	wantStatus(t, h.post("/v1/check/create", keyBasic, with(map[string]any{"verify_before_save": true})), http.StatusOK)
	if got := h.srv.KeyStats(keyBasic).Checks; got != 1 {
		t.Errorf("basic key has %d checks, want 1 (the 403 must not store one)", got)
	}
}

func TestTokenization(t *testing.T) {
	h := newHarness(t, Options{})
	tok := map[string]any{"first_name": "Ada", "last_name": "Lovelace", "bank_routing": FixtureRouting,
		"bank_account": "1111000016", "store": "shop-1"}
	r := h.post("/v1/account/tokenization", keyA, tok)
	wantStatus(t, r, http.StatusOK)
	tz := r.body["tokenization"].(map[string]any)
	token := tz["token"].(string)
	if len(token) != 36 || tz["last4"] != "0016" || tz["routing"] != FixtureRouting || tz["name"] != "Ada Lovelace" || tz["bank"] != "Sandbox Test Bank" {
		t.Fatalf("tokenization %s", r.raw)
	}
	noBank := map[string]any{"bank_routing": nil, "bank_account": nil, "token": token, "store": "shop-1", "verify_before_save": true}
	c := h.create(keyA, noBank)
	if c["bank_account"] != "****0016" || c["bank_name"] != "Sandbox Test Bank" || c["bank_routing"] != FixtureRouting ||
		c["store"] != "shop-1" || c["basic_verification"].(map[string]any)["risk_bv"] != "Pass" {
		t.Errorf("token check %v", c)
	}
	wantStatus(t, h.post("/v1/check/create", keyA, with(merge(noBank, map[string]any{"store": "other"}))), http.StatusPaymentRequired)
	wantStatus(t, h.post("/v1/check/create", keyB, with(noBank)), http.StatusPaymentRequired)
	for field, bad := range map[string]any{"first_name": nil, "last_name": strings.Repeat("l", 129),
		"bank_routing": "12345678", "bank_account": "123", "store": nil, "email": strings.Repeat("e", 81), "phone": strings.Repeat("1", 21)} {
		m := merge(tok, nil)
		if bad == nil {
			delete(m, field)
		} else {
			m[field] = bad
		}
		wantField(t, h.post("/v1/account/tokenization", keyA, m), field)
	}
}

func TestBankInfo(t *testing.T) {
	h := newHarness(t, Options{})
	r := h.get("/v1/check/bankinfo?bank_routing="+FixtureRouting, keyA)
	wantStatus(t, r, http.StatusOK)
	if b := r.body["bank"].(map[string]any); b["bank_name"] != "Sandbox Test Bank" || b["bank_routing"] != FixtureRouting {
		t.Errorf("bank %s", r.raw)
	}
	wantStatus(t, h.get("/v1/check/bankinfo?bank_routing=123456789", keyA), http.StatusNotFound) // fails the checksum
	wantStatus(t, h.get("/v1/check/bankinfo?bank_routing="+UnknownRouting, keyA), http.StatusNotFound)
	r = h.get("/v1/check/bankinfo?bank_routing=021000021", keyA)
	wantStatus(t, r, http.StatusOK)
	if b := r.body["bank"].(map[string]any); b["bank_name"] != "Sandbox Bank 0210" {
		t.Errorf("a routing number that passes the checksum: %s", r.raw)
	}
	wantField(t, h.get("/v1/check/bankinfo?bank_routing=12345678", keyA), "bank_routing")
	wantField(t, h.get("/v1/check/bankinfo", keyA), "bank_routing")
}

func TestCreateEscapedStrings(t *testing.T) {
	h := newHarness(t, Options{})
	body := `{"amount":1,"memo":"Caf\u00e9 \"A\"","name":"Ada\\L","email":"a@b.io","bank_routing":"999900001","bank_account":"1111000016"}`
	r := h.send(http.MethodPost, "/v1/check/create", keyA, typeJSON, body)
	wantStatus(t, r, http.StatusOK)
	if c := r.check(); c["memo"] != `Café "A"` || c["name"] != `Ada\L` {
		t.Errorf("escapes decoded wrongly: %s", r.raw)
	}
	bad := `{"amount":1,"memo":"a` + "\xff" + `","name":"n","email":"a@b.io","bank_routing":"999900001","bank_account":"1111000016"}`
	wantField(t, h.send(http.MethodPost, "/v1/check/create", keyA, typeJSON, bad), "memo")
}
