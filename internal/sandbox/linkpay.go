package sandbox

import (
	"encoding/json"
	"net/http"
)

// payLink serves POST /_sandbox/paymentlink/pay, the sandbox's stand-in for
// a payer completing a hosted payment link. The body is checkout_token plus
// the check fields of a create; amount and memo default to the link's. The
// new check carries link_id = checkout_token, so that a client meets checks
// it did not create itself. An unknown token is 404, an inactive link 402.
func (s *Server) payLink(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	p, aerr := readBody(w, r, s.opts.MaxBodyBytes)
	if aerr != nil {
		return aerr
	}
	f := &fields{p: p}
	tok := f.textLen("checkout_token", true, idLen, idLen)
	if f.err != nil {
		return f.err
	}
	ks.mu.Lock()
	pl := ks.linkByTok[tok]
	var lv linkView
	if pl != nil {
		lv = pl.view
	}
	ks.mu.Unlock()
	if pl == nil {
		return errorf(http.StatusNotFound, "Payment link not found")
	}
	if lv.Status != linkActive {
		return errorf(http.StatusPaymentRequired, "Payment link is %s", lv.Status)
	}
	if lv.Amount != nil {
		p.setDefault("amount", lv.Amount.c.String(), json.RawMessage(lv.Amount.c.String()))
	}
	if lv.Memo != "" {
		memo, _ := json.Marshal(lv.Memo)
		p.setDefault("memo", lv.Memo, memo)
	}
	in, aerr := readCheckInput(p, false, s.keyNow(ks))
	if aerr != nil {
		return aerr
	}
	s.storeInput(&in)
	ks.mu.Lock()
	now := s.keyNow(ks)
	s.settle(ks, now)
	if aerr := ks.resolveToken(&in); aerr != nil {
		ks.mu.Unlock()
		return aerr
	}
	c := ks.addCheck(in, now)
	c.linkID = tok
	s.emitCheck(ks, eventCheckCreated, c, now)
	v := s.render(c)
	ks.mu.Unlock()
	writeJSON(w, http.StatusOK, checkEnvelope{ok("Check created"), v})
	return nil
}

// setDefault gives a field a value when the request left it out. raw is
// the value as JSON, text as form text.
func (p *params) setDefault(name, text string, raw json.RawMessage) {
	if _, ok := p.get(name); ok {
		return
	}
	if p.js != nil {
		p.js[name] = raw
		return
	}
	p.form.Set(name, text)
}
