package sandbox

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/batchd/batchd/internal/redact"
)

// tokenEntry is a tokenized account. Checks that give its token and store
// draw on this account and get its fixture results.
type tokenEntry struct {
	routing, account, store, name string
}

// tokenization is the body of a tokenization answer.
type tokenization struct {
	Token   string `json:"token"`
	Bank    string `json:"bank"`
	Routing string `json:"routing"`
	Last4   string `json:"last4"`
	Name    string `json:"name"`
}

// tokenize serves POST /v1/account/tokenization (fields of spec 2.3). Every
// call issues a new token, also for an account tokenized before.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	f := s.readFields(w, r)
	first := f.text("first_name", true, maxPersonal)
	last := f.text("last_name", true, maxPersonal)
	f.email("email", maxEmail)
	f.text("phone", false, maxPhone)
	account := f.digits("bank_account", true, false, 4, 17)
	routing := f.digits("bank_routing", true, false, 9, 9)
	store := f.text("store", true, maxStore)
	if f.err != nil {
		return f.err
	}
	te := tokenEntry{routing: routing, account: account, store: store, name: first + " " + last}
	ks.mu.Lock()
	tok := uuid.NewString()
	for _, taken := ks.tokens[tok]; taken; _, taken = ks.tokens[tok] {
		tok = uuid.NewString()
	}
	ks.tokens[tok] = te
	ks.mu.Unlock()
	b, _ := lookupBank(routing)
	writeJSON(w, http.StatusOK, struct {
		Success      bool         `json:"success"`
		Tokenization tokenization `json:"tokenization"`
	}{true, tokenization{Token: tok, Bank: b.Name, Routing: routing, Last4: redact.Last4(account), Name: te.name}})
	return nil
}

// bankInfo serves GET /v1/check/bankinfo?bank_routing=…. The answer is
// {"success":true,"error":false,"message":"Bank found","bank":{bank_routing,
// bank_name, bank_address, bank_city, bank_state, bank_zip}}, the bank
// fields a check carries; a routing number the sandbox does not know is 404.
func (s *Server) bankInfo(w http.ResponseWriter, r *http.Request, _ *keyState, _ string) *apiError {
	f := queryFields(r)
	routing := f.digits("bank_routing", true, false, 9, 9)
	if f.err != nil {
		return f.err
	}
	b, found := lookupBank(routing)
	if !found {
		return errorf(http.StatusNotFound, "bank_routing: no bank found for this routing number")
	}
	writeJSON(w, http.StatusOK, struct {
		okBody
		Bank bank `json:"bank"`
	}{ok("Bank found"), b})
	return nil
}
