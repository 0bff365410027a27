package ach

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/funding"
)

// The conditions a caller must tell apart, matched with errors.Is on any
// error of the Client. An error may be several at once: ErrCustomerNotFound
// and ErrNotOwner are also ErrNotFound. They are decided in one place,
// kindsOf, from the status, the code and the message, so that a change of
// the service's wording is one edit. A condition onboarding acts on with
// the same meaning is funding's own sentinel, not a twin of it:
// funding.ErrDeprecated (410: micro-deposit initiation is no longer
// offered; link the account with a processor token instead),
// funding.ErrInvalidToken (400 INVALID_PROCESSOR_TOKEN: the token was
// issued for another processor or environment, was revoked, is unknown or
// was already exchanged), funding.ErrAccountTaken (the account number is
// bound to another customer, who must free it with DeleteAccount) and
// funding.ErrTooManySources (the customer has reached the funding source
// limit).
var (
	// ErrAuth: the key was refused (401, 403: missing, invalid, revoked,
	// of the other environment, or its application inactive). Fatal.
	ErrAuth = errors.New("ach: API key refused")
	// ErrNotFound: the customer, funding source or bank account named does
	// not exist for this key (404). An unknown endpoint is not ErrNotFound.
	ErrNotFound = errors.New("ach: not found")
	// ErrCustomerNotFound: the user_id does not exist (404 "Customer not
	// found"). Also ErrNotFound.
	ErrCustomerNotFound = errors.New("ach: customer not found")
	// ErrNotOwner: the user_id is another merchant's customer (404 "You are
	// not the owner of the customer"). Also ErrNotFound.
	ErrNotOwner = errors.New("ach: customer belongs to another merchant")
	// ErrAccountSubtype: the account behind a processor token is neither
	// checking nor savings.
	ErrAccountSubtype = errors.New("ach: only checking and savings accounts are accepted")
	// ErrAlreadyLinked: the customer already holds this account. After an
	// Ambiguous create this means the earlier create took effect.
	ErrAlreadyLinked = errors.New("ach: bank account already linked to this customer")
	// ErrEmailTaken: a customer with this email already exists for the key;
	// UserIDOf names it when the service says which.
	ErrEmailTaken = errors.New("ach: customer email already exists")
	// ErrNotVerified: a debit from a funding source that is not Verified
	// (402).
	ErrNotVerified = errors.New("ach: funding source not verified for debits")
	// ErrNotInitiated: a verify before any micro-deposit initiation.
	ErrNotInitiated = errors.New("ach: verification not initiated")
	// ErrWrongAmounts: the amounts do not match the micro-deposits; the
	// source stays Pending while tries are left.
	ErrWrongAmounts = errors.New("ach: amounts do not match the micro-deposits")
	// ErrTooManyAttempts: verification failed for good after too many
	// wrong tries; the source is VerificationFailed. The last wrong try
	// ("0 attempts left") is both this and ErrWrongAmounts.
	ErrTooManyAttempts = errors.New("ach: too many failed verification attempts")
	// ErrThrottled: the service answered 429. Retryable after RetryAfter.
	ErrThrottled = errors.New("ach: rate limited")
)

// conditions names what a refusal says beyond its class
// (apiwire.Wire.Conditions): the conditions above, by kindsOf, and the
// domain's sentinels that the client's own stand for, by the table
// domainKinds.
func conditions(status int, code, msg string) (conds, outcomes []error) {
	conds = kindsOf(status, code, msg)
	for _, m := range domainKinds {
		if slices.Contains(conds, m.wire) {
			outcomes = append(outcomes, m.domain)
		}
	}
	return conds, outcomes
}

// kindsOf is the one function that tells the service's conditions apart,
// from the HTTP status (0 for a 2xx that flagged an error), the "code" and
// the "message". A message is matched case-insensitively on the phrase the
// contract gives, so that punctuation or a prefix does not matter; a 5xx
// is never read as a condition.
func kindsOf(status int, code, msg string) []error {
	var ks []error
	add := func(e error) { ks = append(ks, e) }
	low := strings.ToLower(msg)
	has := func(s string) bool { return strings.Contains(low, s) }
	switch {
	case status >= 500:
		return nil
	case status == http.StatusUnauthorized || status == http.StatusForbidden,
		has("api key is missing"), has("access key invalid"), has("app inactive"):
		add(ErrAuth)
	case status == http.StatusGone:
		add(funding.ErrDeprecated)
	case status == http.StatusTooManyRequests:
		add(ErrThrottled)
	}
	if has("customer not found") {
		add(ErrCustomerNotFound)
	}
	if has("not the owner") {
		add(ErrNotOwner)
	}
	if status == http.StatusNotFound && !has("no such endpoint") {
		add(ErrNotFound)
	}
	if strings.EqualFold(strings.TrimSpace(code), "INVALID_PROCESSOR_TOKEN") || has("invalid_processor_token") {
		add(funding.ErrInvalidToken)
	}
	for _, m := range []struct {
		phrase string
		kind   error
	}{
		{"only checking and savings", ErrAccountSubtype},
		{"associated with another user", funding.ErrAccountTaken},
		{"already linked", ErrAlreadyLinked},
		{"maximum number of bank accounts", funding.ErrTooManySources},
		{"email already exists", ErrEmailTaken},
		{"not verified for debit", ErrNotVerified},
		{"has not been initiated", ErrNotInitiated},
		{"do not match", ErrWrongAmounts},
		{"too many failed verification", ErrTooManyAttempts},
	} {
		if has(m.phrase) {
			add(m.kind)
		}
	}
	// The wrong try that spends the last attempt may be worded as a
	// mismatch with nothing left: the source has failed all the same.
	if has("(0 attempts left)") && !slices.Contains(ks, ErrTooManyAttempts) {
		add(ErrTooManyAttempts)
	}
	if status == http.StatusPaymentRequired && !slices.Contains(ks, ErrNotVerified) {
		add(ErrNotVerified)
	}
	return ks
}

// apiMessage reads the message and code of an error body: "message", else
// the first of "messages", else "error" when it is a string and not a
// boolean word. A body that is not a JSON object is quoted instead.
func apiMessage(body []byte, status int) (msg, code string, m object) {
	return apiwire.Message(body, status, func(m object) string {
		f := fields{m: m}
		msg := f.str("message")
		if msg == "" {
			if o, ok := apiwire.ObjectOf(m["messages"]); ok {
				// {"messages": {"field": ["reason"]}}: the first field's reason
				msg = firstReason(o)
			} else if l, err := apiwire.ListOf(m["messages"]); err == nil && len(l) > 0 {
				msg, _ = textOf(l[0])
			}
		}
		if msg == "" {
			if s := f.str("error"); s != "" {
				if _, isBool := apiwire.BoolText(s); !isBool {
					msg = s
				}
			}
		}
		return msg
	})
}

// firstReason returns "field: reason" for the first field, in name order,
// of a validation object.
func firstReason(o object) string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		reason, _ := textOf(o[k])
		if l, err := apiwire.ListOf(o[k]); err == nil && len(l) > 0 {
			reason, _ = textOf(l[0])
		}
		if reason != "" {
			return k + ": " + reason
		}
	}
	return ""
}

// errorFlagged reports whether a 2xx body says it failed: "error" is true
// or a non-empty message string or object, or "success" is false. A
// "success" of blanks says nothing.
func errorFlagged(m object) bool { return apiwire.ErrorFlagged(m, false) }
