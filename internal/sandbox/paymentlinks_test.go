package sandbox

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestPaymentLinkCreate(t *testing.T) {
	h := newHarness(t, Options{})
	r := h.post("/v1/paymentlink/create", keyA, map[string]any{})
	wantStatus(t, r, http.StatusOK)
	l := r.body["checkout_link"].(map[string]any)
	tok := l["checkout_token"].(string)
	if len(tok) != 36 || l["link"] != linkBase+tok || l["amount"] != nil || l["status"] != linkActive {
		t.Errorf("link %s", r.raw)
	}
	good := map[string]any{"amount": "25.00", "memo": "Dues", "thank_you_url": "https://example.com/ty",
		"error_url": "http://example.com/err", "recurring": 1, "recurring_cycle": "month",
		"recurring_installments": 12, "fund_confirmation": "true", "basic_verification": 1,
		"is_bankauth": false, "signature_required": "0", "submit_for_approval": true}
	r = h.post("/v1/paymentlink/create", keyA, good)
	wantStatus(t, r, http.StatusOK)
	if l := r.body["checkout_link"].(map[string]any); l["amount"].(interface{ String() string }).String() != "25.00" || l["memo"] != "Dues" {
		t.Errorf("link %s", r.raw)
	}
	cases := []struct {
		field string
		value any
	}{
		{"amount", 0}, {"amount", "1.001"}, {"memo", strings.Repeat("m", 129)},
		{"thank_you_url", "not a url"}, {"thank_you_url", "ftp://example.com"}, {"error_url", "/relative"},
		{"recurring", 3}, {"recurring_cycle", "yearly"}, {"recurring_start_date", "03/02/2026"},
		{"recurring_installments", -2}, {"is_bankauth", "maybe"},
	}
	for _, tc := range cases {
		wantField(t, h.post("/v1/paymentlink/create", keyA, map[string]any{tc.field: tc.value}), tc.field)
	}
	wantField(t, h.post("/v1/paymentlink/create", keyA, map[string]any{"recurring": 1}), "recurring_cycle")
}

func TestPaymentLinkListAndStatus(t *testing.T) {
	h := newHarness(t, Options{})
	var toks []string
	for i, a := range []string{"30.00", "10.00", "20.00"} {
		r := h.post("/v1/paymentlink/create", keyA, map[string]any{"amount": a, "memo": []string{"Gym", "books", "Art"}[i]})
		toks = append(toks, r.body["checkout_link"].(map[string]any)["checkout_token"].(string))
		h.clock.Add(time.Second)
	}
	field := func(r resp, f string) string {
		var out []string
		for _, d := range r.data() {
			out = append(out, d.(map[string]any)[f].(string))
		}
		return strings.Join(out, ",")
	}
	cases := []struct{ query, want string }{
		{"", "Art,books,Gym"},
		{"?direction=ASC", "Gym,books,Art"},
		{"?sort=amount&direction=ASC", "books,Art,Gym"},
		{"?sort=memo&direction=ASC", "Art,books,Gym"},
		{"?search=BOOK", "books"},
		{"?search=20.00", "Art"},
		{"?search=2026-03-02", "Art,books,Gym"},
		{"?limit=1&page=2", "books"},
	}
	for _, tc := range cases {
		r := h.get("/v1/paymentlink/list"+tc.query, keyA)
		wantStatus(t, r, http.StatusOK)
		if got := field(r, "memo"); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.query, got, tc.want)
		}
	}
	if l := h.get("/v1/paymentlink/list?limit=1&page=2", keyA).list(); l["total"] != "3" || l["from"] != "1" || l["to"] != "3" {
		t.Errorf("paging %v", l)
	}
	wantField(t, h.get("/v1/paymentlink/list?sort=bogus", keyA), "sort")
	wantField(t, h.get("/v1/paymentlink/list?limit=0", keyA), "limit")
	if got := h.get("/v1/paymentlink/list", keyB).list()["total"]; got != "0" {
		t.Errorf("key B sees %v links", got)
	}

	path := "/v1/paymentlink/changestatus/"
	wantField(t, h.send(http.MethodDelete, path+"short", keyA, typeJSON, ""), "checkout_token")
	wantStatus(t, h.send(http.MethodDelete, path+strSeq(36), keyA, typeJSON, ""), http.StatusNotFound)
	wantStatus(t, h.send(http.MethodDelete, path+toks[0], keyB, typeJSON, ""), http.StatusNotFound)
	for range 2 {
		r := h.send(http.MethodDelete, path+toks[0], keyA, typeJSON, "")
		wantStatus(t, r, http.StatusOK)
		if r.body["checkout_link"].(map[string]any)["status"] != linkInactive {
			t.Errorf("changestatus %s", r.raw)
		}
	}
}

func TestPaymentLinkPay(t *testing.T) {
	h := newHarness(t, Options{})
	tok := h.post("/v1/paymentlink/create", keyA, map[string]any{"amount": "15.00", "memo": "Club dues"}).
		body["checkout_link"].(map[string]any)["checkout_token"].(string)
	h.create(keyA, nil)
	payer := map[string]any{"checkout_token": tok, "name": "Payer", "email": "p@example.com",
		"bank_routing": FixtureRouting, "bank_account": "1111000020"}
	r := h.post("/_sandbox/paymentlink/pay", keyA, payer)
	wantStatus(t, r, http.StatusOK)
	c := r.check()
	if c["link_id"] != tok || c["memo"] != "Club dues" || c["amount"].(interface{ String() string }).String() != "15.00" {
		t.Errorf("paid check %s", r.raw)
	}
	if ids := dataIDs(h.get("/v1/check/list?link_id="+tok, keyA)); len(ids) != 1 || ids[0] != c["check_id"] {
		t.Errorf("link_id filter %v", ids)
	}
	wantStatus(t, h.post("/_sandbox/paymentlink/pay", keyB, payer), http.StatusNotFound)
	h.send(http.MethodDelete, "/v1/paymentlink/changestatus/"+tok, keyA, typeJSON, "")
	wantStatus(t, h.post("/_sandbox/paymentlink/pay", keyA, payer), http.StatusPaymentRequired)
}

// TestPaymentLinkPayControl checks what process tests of payment-link
// files rely on: a link is paid by its token alone, with its amount or
// another, as often as asked; the check list's link_id filter finds the
// checks of one link only; a link without amount needs one.
func TestPaymentLinkPayControl(t *testing.T) {
	h := newHarness(t, Options{})
	newLink := func(body map[string]any) string {
		r := h.post("/v1/paymentlink/create", keyA, body)
		wantStatus(t, r, http.StatusOK)
		return r.body["checkout_link"].(map[string]any)["checkout_token"].(string)
	}
	amountOf := func(c map[string]any) string { return c["amount"].(interface{ String() string }).String() }
	var toks []string
	for i := range 20 {
		toks = append(toks, newLink(map[string]any{"amount": "10.00", "memo": "Invoice " + strconv.Itoa(i+1)}))
	}
	for _, tok := range toks[:5] {
		r := h.post("/_sandbox/paymentlink/pay", keyA, map[string]any{"checkout_token": tok})
		wantStatus(t, r, http.StatusOK)
		if c := r.check(); c["link_id"] != tok || amountOf(c) != "10.00" || c["name"] != payerName || c["status"] != statusInProcess {
			t.Fatalf("paid check %s", r.raw)
		}
	}
	again := h.post("/_sandbox/paymentlink/pay", keyA, map[string]any{"checkout_token": toks[0], "amount": "3.50"})
	wantStatus(t, again, http.StatusOK)
	if amountOf(again.check()) != "3.50" {
		t.Errorf("paying another amount: %s", again.raw)
	}
	if ids := dataIDs(h.get("/v1/check/list?link_id="+toks[0], keyA)); len(ids) != 2 {
		t.Errorf("link paid twice: the link_id filter finds %d checks", len(ids))
	}
	for i, tok := range toks[1:] {
		want := 0
		if i < 4 {
			want = 1
		}
		if ids := dataIDs(h.get("/v1/check/list?link_id="+tok, keyA)); len(ids) != want {
			t.Errorf("link %d: the link_id filter finds %d checks, want %d", i+1, len(ids), want)
		}
	}
	if total := h.get("/v1/check/list?limit=100", keyA).list()["total"]; total != "6" {
		t.Errorf("%v checks in all, want the 6 payments", total)
	}
	open := newLink(map[string]any{})
	wantField(t, h.post("/_sandbox/paymentlink/pay", keyA, map[string]any{"checkout_token": open}), "amount")
	r := h.post("/_sandbox/paymentlink/pay", keyA, map[string]any{"checkout_token": open, "amount": "1.00"})
	if c := r.check(); c["memo"] != payerMemo || amountOf(c) != "1.00" {
		t.Errorf("link without amount or memo paid: %s", r.raw)
	}
}

// TestPaymentLinkSearchRefusedInQuirks checks that quirks mode refuses the
// link list's search parameter (so that a client's walk of the whole list
// is tested) and still lists.
func TestPaymentLinkSearchRefusedInQuirks(t *testing.T) {
	h := newHarness(t, Options{Quirks: true})
	wantStatus(t, h.post("/v1/paymentlink/create", keyA, map[string]any{"memo": "Invoice 7"}), http.StatusOK)
	wantField(t, h.get("/v1/paymentlink/list?search=Invoice", keyA), "search")
	if n := len(h.get("/v1/paymentlink/list", keyA).data()); n != 1 {
		t.Errorf("list without search: %d links", n)
	}
}
