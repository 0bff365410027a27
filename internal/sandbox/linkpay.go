package sandbox

import (
	"cmp"
	"encoding/json"
	"net/http"
)

// payLink serves POST /_sandbox/paymentlink/pay, the sandbox's stand-in for
// a payer completing a hosted payment link. The body is checkout_token plus
// any check fields of a create, the others filled in by defaultPayment,
// so that {"checkout_token": …} alone pays a link of fixed amount and
// {"checkout_token": …, "amount": "7.00"} pays another amount. The new check carries link_id = checkout_token, so that a client
// meets checks it did not create itself. The link stays active: it can be
// paid again, as a recurring or reused link is (docs/sandbox-assumptions.md).
// An unknown token is 404, an inactive link 402, a link without amount
// paid without one 400 (amount: required).
func (s *Server) payLink(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	f := s.readFields(w, r)
	tok := f.textLen("checkout_token", true, idLen, idLen)
	if f.err != nil {
		return f.err
	}
	lv, aerr := ks.activeLink(tok)
	if aerr != nil {
		return aerr
	}
	defaultPayment(&f.p, lv)
	in, aerr := readCheckInput(f.p, false, s.keyNow(ks))
	if aerr != nil {
		return aerr
	}
	s.storeInput(&in)
	v, aerr := s.storeCheck(ks, in, tok)
	if aerr != nil {
		return aerr
	}
	writeJSON(w, http.StatusOK, checkEnvelope{ok("Check created"), v})
	return nil
}

// activeLink is the link of checkout token tok, which a payer can pay: 404
// for a token the key does not have, 402 for an inactive link.
func (ks *keyState) activeLink(tok string) (linkView, *apiError) {
	ks.mu.Lock()
	pl := ks.linkByTok[tok]
	var lv linkView
	if pl != nil {
		lv = pl.view
	}
	ks.mu.Unlock()
	if pl == nil {
		return linkView{}, errorf(http.StatusNotFound, "Payment link not found")
	}
	if lv.Status != linkActive {
		return linkView{}, errorf(http.StatusPaymentRequired, "Payment link is %s", lv.Status)
	}
	return lv, nil
}

// Payer of a link paid without one: a fixture account whose verification
// passes with sufficient funds, so that the check it makes moves on to
// printed like any good check.
const (
	payerName    = "Sandbox Payer"
	payerMemo    = "Payment link" // the check's memo when the link has none
	payerEmail   = "payer@example.com"
	payerAccount = testAccountPrefix + "16"
)

// defaultPayment fills in what a pay request of link lv left out: the
// link's amount and memo (payerMemo for a link without one, since a check
// needs one), the payer's name, an e-mail unless an address is given, and
// the fixture bank account unless the request names bank details or a
// token of its own.
func defaultPayment(p *params, lv linkView) {
	if lv.Amount != nil {
		p.setDefault("amount", lv.Amount.c.String())
	}
	p.setDefault("memo", cmp.Or(lv.Memo, payerMemo))
	p.setDefault("name", payerName)
	if !p.has("address") {
		p.setDefault("email", payerEmail)
	}
	if !p.has("bank_routing") && !p.has("bank_account") && !p.has("token") && !p.has("store") {
		p.setDefault("bank_routing", FixtureRouting)
		p.setDefault("bank_account", payerAccount)
	}
}

// has reports whether the request gives the field.
func (p *params) has(name string) bool {
	_, ok := p.get(name)
	return ok
}

// setDefault gives a field a text value when the request left it out.
func (p *params) setDefault(name, text string) {
	if p.has(name) {
		return
	}
	if p.js != nil {
		raw, _ := json.Marshal(text)
		p.js[name] = raw
		return
	}
	p.form.Set(name, text)
}
