package sandbox

import (
	"net/http"
	"strings"

	"github.com/batchd/batchd/internal/redact"
)

// achFaults is the ACH API's wording of injected faults (docs/ach-wire.md,
// error table): the same faults as /v1, other messages.
var achFaults = faultText{"rate limit exceeded", "sandbox: injected error", "sandbox: injected error", writeACHError}

// authenticateACH returns the state of the request's key or the ACH
// API's 403 (spec §7): the /v1 endpoints answer the same failures 401, as
// their part of the specification says. A live key is "of the other
// environment", hence invalid here. "Bearer" alone (its trailing space
// trimmed by net/http) is a missing key, not a wrong one.
func (s *Server) authenticateACH(r *http.Request) (*keyState, *apiError) {
	v := bearerKey(r.Header.Get("Authorization"))
	if v == "" || strings.EqualFold(v, "Bearer") {
		return nil, errorf(http.StatusForbidden, "API key is missing in Authorization header")
	}
	ks := s.lookupKey(v)
	switch {
	case ks == nil:
		return nil, errorf(http.StatusForbidden, "Access key invalid")
	case ks.key.Inactive:
		return nil, errorf(http.StatusForbidden, "App inactive")
	}
	return ks, nil
}

// redactKey is the key of ks as the request log may show it.
func redactKey(ks *keyState) string { return redact.Secret(ks.key.Value) }

// achError is the ACH API's error envelope (docs/ach-wire.md): success
// false beside error true, and a code only where the table gives one.
type achError struct {
	Success bool   `json:"success"`
	Error   bool   `json:"error"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

// writeACHError answers with the ACH error envelope of e.
func writeACHError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, achError{Error: true, Code: e.code, Message: e.msg})
}

// achOK is the head of every ACH success answer.
type achOK struct {
	Success bool `json:"success"`
}

// succeeded is the head of a success answer.
func succeeded() achOK { return achOK{Success: true} }
