package sandbox

import (
	"net/http"
	"strings"

	"github.com/google/uuid"
)

// processorName is the processor a bank-linking provider's token must be
// issued for (spec §4.2, §9).
const processorName = "svcach"

// Environments of the bank-linking provider.
const (
	envSandbox    = "sandbox"
	envProduction = "production"
)

// invalidToken is the code of every refused processor token.
const invalidToken = "INVALID_PROCESSOR_TOKEN"

// processorToken is a token the stand-in provider issued for one account.
type processorToken struct {
	owner            *keyState // the key that asked for it; others do not know it
	processor, env   string
	routing, account string
	subtype          string
	revoked, used    bool
}

// tokenError is the 400 of a refused processor token: code
// INVALID_PROCESSOR_TOKEN, the reason after it in the message.
func tokenError(reason string) *apiError {
	return &apiError{status: http.StatusBadRequest, code: invalidToken, msg: invalidToken + ": " + reason}
}

// issueToken serves POST /ach/v2/_sandbox/processor/token, the stand-in
// for the provider's processor-token creation. Any processor name and
// environment is issued, as the provider would; the exchange decides.
func (s *Server) issueToken(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	f := s.readFields(w, r)
	t := &processorToken{owner: ks, processor: f.text("processor", true, maxProcessor)}
	if t.env = f.enum("environment", envSandbox, envProduction); t.env == "" {
		t.env = envSandbox
	}
	t.routing, t.account = f.bankAccount()
	if t.subtype = strings.ToLower(f.text("subtype", false, maxProcessor)); t.subtype == "" {
		t.subtype = typeChecking
	}
	if aerr := f.failed(); aerr != nil {
		return aerr
	}
	tok := "processor-" + t.env + "-" + uuid.NewString()
	s.ach.mu.Lock()
	s.ach.tokens[tok] = t
	s.ach.mu.Unlock()
	writeJSON(w, http.StatusOK, struct {
		achOK
		ProcessorToken string `json:"processor_token"`
	}{succeeded(), tok})
	return nil
}

// revokeToken serves POST /ach/v2/_sandbox/processor/token/revoke: the
// user revoked the connection at the provider. An unknown token (or
// another key's) is 404 (decided).
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	f := s.readFields(w, r)
	tok := f.text("processor_token", true, maxProcessorTok)
	if aerr := f.failed(); aerr != nil {
		return aerr
	}
	s.ach.mu.Lock()
	defer s.ach.mu.Unlock()
	t := s.ach.tokens[tok]
	if t == nil || t.owner != ks {
		return errorf(http.StatusNotFound, "Processor token not found")
	}
	t.revoked = true
	writeJSON(w, http.StatusOK, succeeded())
	return nil
}

// tokenProblem says why t cannot be exchanged, or nil. The legacy
// processor name counts only while Options.LegacyProcessor names it.
func (s *Server) tokenProblem(ks *keyState, t *processorToken) *apiError {
	switch {
	case t == nil || t.owner != ks:
		return tokenError("unknown processor token")
	case t.revoked:
		return tokenError("the connection was revoked at the provider; link the account again")
	case t.used:
		return tokenError("the token was already exchanged")
	case t.env != envSandbox:
		return tokenError("the token was issued in the provider's production environment, not its sandbox")
	case t.processor != processorName && (s.opts.LegacyProcessor == "" || t.processor != s.opts.LegacyProcessor):
		return tokenError("the token was issued for another processor; issue it for " + processorName)
	case t.subtype != typeChecking && t.subtype != typeSavings:
		return errorf(http.StatusBadRequest, "Only checking and savings accounts are accepted")
	}
	return nil
}

// exchangeToken serves POST /ach/v2/funding-source/processor/plaid
// {user_id, processor_token}: the account the token was issued for
// becomes a verified source and the customer's primary. A token is
// spent only by a successful exchange.
func (s *Server) exchangeToken(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	f := s.readFields(w, r)
	userID := f.text("user_id", true, maxACHID)
	tok := f.text("processor_token", true, maxProcessorTok)
	if aerr := f.failed(); aerr != nil {
		return aerr
	}
	a := s.ach
	a.mu.Lock()
	src, aerr := s.exchange(ks, userID, tok)
	var ans sourceAnswer
	if src != nil {
		ans = sourceAnswer{succeeded(), s.viewSource(src, false)}
	}
	a.mu.Unlock()
	if aerr != nil {
		return aerr
	}
	s.answerCreate(w, ans)
	return nil
}

// exchange checks the customer, then the token, then links the account,
// under a.mu.
func (s *Server) exchange(ks *keyState, userID, tok string) (*fundingSource, *apiError) {
	a := s.ach
	if _, aerr := a.customerOf(ks, userID); aerr != nil {
		return nil, aerr
	}
	t := a.tokens[tok]
	if aerr := s.tokenProblem(ks, t); aerr != nil {
		return nil, aerr
	}
	in := sourceInput{userID: userID, routing: t.routing, account: t.account, kind: t.subtype}
	src, aerr := s.link(ks, in, srcVerifiedProcessor, true, s.keyNow(ks))
	if aerr != nil {
		return nil, aerr
	}
	t.used = true
	return src, nil
}
