package ach

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
)

// Class tells a caller what it may do after a failed call. The classes and
// their meaning are those of internal/echeck, so that batchd's retry
// policy treats both APIs alike. The zero Class is not a class: ClassOf
// returns it only for a nil error.
type Class int

const (
	// Retryable: the service did not act on the request (it was never
	// fully sent, or the service said so with 429, 408, 500 or 503 on a
	// call without an effect worth guarding). Sending it again is safe.
	Retryable = Class(apiwire.Retryable)
	// Ambiguous: a call with an effect (a create, a debit or credit, a
	// verification step) was sent but its answer was lost or unreadable,
	// so the effect may or may not have happened. The caller must find out
	// (list the customer's funding sources, look the source up) before
	// sending it again.
	Ambiguous = Class(apiwire.Ambiguous)
	// Permanent: the service refused this request (400, 402, 404, 410,
	// ...). Sending it again will fail the same way.
	Permanent = Class(apiwire.Permanent)
	// Fatal: the key is missing, wrong, of the other environment, or its
	// application is inactive (401, 403). Every further call will fail
	// too; the run should stop.
	Fatal = Class(apiwire.Fatal)
)

// String returns the lower-case name of c, as echeck.Class does.
func (c Class) String() string { return apiwire.Class(c).String() }

// The conditions a caller must tell apart, matched with errors.Is on any
// error of the Client. An *Error may be several at once: ErrCustomerNotFound
// and ErrNotOwner are also ErrNotFound. They are decided in one place,
// kindsOf, from the status, the code and the message, so that a change of
// the service's wording is one edit.
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
	// ErrDeprecated: micro-deposit initiation is no longer offered (410,
	// from 2026-06-08); link the account with a processor token instead.
	ErrDeprecated = errors.New("ach: micro-deposit verification deprecated")
	// ErrInvalidProcessorToken: the token was issued for another processor
	// or environment, was revoked, is unknown or was already exchanged
	// (400 INVALID_PROCESSOR_TOKEN). A new token is needed.
	ErrInvalidProcessorToken = errors.New("ach: invalid processor token")
	// ErrAccountSubtype: the account behind a processor token is neither
	// checking nor savings.
	ErrAccountSubtype = errors.New("ach: only checking and savings accounts are accepted")
	// ErrAccountTaken: the account number is bound to another customer;
	// it must be freed with DeleteAccount by its owner first.
	ErrAccountTaken = errors.New("ach: bank account associated with another user")
	// ErrAlreadyLinked: the customer already holds this account. After an
	// Ambiguous create this means the earlier create took effect.
	ErrAlreadyLinked = errors.New("ach: bank account already linked to this customer")
	// ErrTooManySources: the customer has reached the funding source limit.
	ErrTooManySources = errors.New("ach: maximum number of bank accounts reached")
	// ErrEmailTaken: a customer with this email already exists for the key;
	// Error.UserID names it when the service says which.
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
		add(ErrDeprecated)
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
		add(ErrInvalidProcessorToken)
	}
	for _, m := range []struct {
		phrase string
		kind   error
	}{
		{"only checking and savings", ErrAccountSubtype},
		{"associated with another user", ErrAccountTaken},
		{"already linked", ErrAlreadyLinked},
		{"maximum number of bank accounts", ErrTooManySources},
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

// Error is every error the Client returns. Its text never holds the API
// key or a processor token, and shows an account number only masked, even
// when the service echoes them.
type Error struct {
	Op         string        // operation, such as "ach.fundingsource.create" (see the Op constants)
	Status     int           // HTTP status; 0 when no response was read
	Message    string        // the service's message, or an excerpt of a non-JSON body
	Code       string        // the service's "code", when it sent one
	RetryAfter time.Duration // from a Retry-After header; 0 when absent
	Class      Class         // what the caller may do next
	// UserID is a customer the error answer named, such as the existing
	// customer of an email that is taken (ErrEmailTaken).
	UserID string
	Err    error // the underlying network or decoding error, if any

	kinds []error // the sentinels this error is, from kindsOf
}

// Error describes the failure in one line, ending with its class.
func (e *Error) Error() string {
	return (&apiwire.Failure{Op: e.Op, Status: e.Status, Message: e.Message, Code: e.Code,
		RetryAfter: e.RetryAfter, Class: apiwire.Class(e.Class), Err: e.Err}).Text("ach")
}

// Unwrap returns the underlying error, so errors.Is(err,
// context.DeadlineExceeded) works through an *Error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether e is the condition target, one of the Err sentinels
// of this package.
func (e *Error) Is(target error) bool { return slices.Contains(e.kinds, target) }

// RetryDelay is the service's Retry-After (payment.RetryAfter reads it).
func (e *Error) RetryDelay() time.Duration { return e.RetryAfter }

// ServiceMessage is the service's own message (payment.ServiceMessage
// reads it).
func (e *Error) ServiceMessage() string { return e.Message }

// ClassOf classifies any error, as echeck.ClassOf does:
//   - nil gives the zero Class;
//   - an *Error anywhere in the chain gives its Class;
//   - context.Canceled or context.DeadlineExceeded without an *Error gives
//     Retryable: the client wraps every error it returns, so such an error
//     did not come from a request in flight;
//   - any other error gives Ambiguous: it did not come from this client,
//     and Ambiguous is the one class under which a caller neither resends
//     blindly nor gives up.
func ClassOf(err error) Class {
	return Class(apiwire.ClassOf(err, func(e *Error) apiwire.Class { return apiwire.Class(e.Class) }))
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
