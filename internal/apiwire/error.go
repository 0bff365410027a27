package apiwire

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// Error is every error either client returns. Its text never holds the
// API key or a processor token, and shows an account number only masked,
// even when the service echoes them.
type Error struct {
	Op         string        // operation, such as "check.create" (the clients' Op constants)
	Status     int           // HTTP status; 0 when no response was read
	Class      Class         // what the caller may do next
	Message    string        // what went wrong, or the service's message
	Code       string        // the service's "code", when it sent one
	RetryAfter time.Duration // from a Retry-After header; 0 when absent
	Err        error         // the underlying network or decoding error, if any
	// Refused is set when the service answered and said no: a non-2xx, or
	// a 2xx that flagged an error. Message and Code are then its own, and
	// Answer the object of its body (nil when the body is not one).
	Refused bool
	Answer  Object

	client   string  // the client's name (Wire.Name), which starts the text
	conds    []error // the client's sentinels this error is (Wire.Conditions)
	outcomes []error // the domain's sentinels it is once filed (Wire.Conditions)
	domain   bool    // filed under the domain's failures (Domain)
	outer    error   // the error Domain filed when it was not a bare *Error
}

// Error describes the failure in one line, after the client's name,
// ending with its class: "echeck check.create: HTTP 400 code 7: message:
// cause (permanent)". An error Domain filed from another keeps its text.
func (e *Error) Error() string {
	if e.outer != nil {
		return e.outer.Error()
	}
	var b strings.Builder
	if e.client != "" {
		b.WriteString(e.client + " ")
	}
	b.WriteString(e.Op)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " code %s", e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	fmt.Fprintf(&b, " (%s", e.Class)
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, ", retry after %s", e.RetryAfter)
	}
	b.WriteString(")")
	return b.String()
}

// Unwrap returns the underlying error, so errors.Is(err,
// context.DeadlineExceeded) works through an *Error.
func (e *Error) Unwrap() error {
	if e.outer != nil {
		return e.outer
	}
	return e.Err
}

// Is reports whether e is the condition target: one of its client's
// sentinels (such as ach.ErrNotFound), or, once filed by Domain,
// payment.ErrService, its class's failure (outcomes) or a domain sentinel
// its client named (such as payment.ErrNotFound).
func (e *Error) Is(target error) bool {
	if slices.Contains(e.conds, target) {
		return true
	}
	if !e.domain || target == nil {
		return false
	}
	return target == payment.ErrService || target == outcomes[e.Class] || slices.Contains(e.outcomes, target)
}

// RetryDelay is the service's Retry-After (payment.RetryAfter reads it).
func (e *Error) RetryDelay() time.Duration { return e.RetryAfter }

// ServiceMessage is the service's own message (payment.ServiceMessage
// reads it).
func (e *Error) ServiceMessage() string { return e.Message }

// Domain files err under the domain's failures, for a client's domain
// adapter (echeck.Service, ach.FundingService): the result is
// payment.ErrService, the failure of its class by the table outcomes, and
// the domain sentinels its client named; its text and fields stay the
// client's own. The clients' own errors are not the domain's, so that a
// call outside the adapters (the webhook registration, doctor) is not
// reported as a payment service failure. An error that did not come from
// a client is classed by ClassOf: a cancellation is not done, anything
// else may have been.
func Domain(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		return &Error{Class: ClassOf(err), domain: true, outer: err}
	}
	d := *e
	d.domain = true
	if err != error(e) {
		d.outer = err // keep the words and the chain of what wrapped e
	}
	return &d
}

// Adapt turns the answer of a client's method into a domain adapter's:
// of converts the value into the domain's, and an error is filed by
// Domain. Written apiwire.Adapt(of)(client.Method(...)), so that an
// adapter's method is its conversion and nothing more.
func Adapt[W, D any](of func(W) D) func(W, error) (D, error) {
	return func(w W, err error) (D, error) {
		if err != nil {
			var none D
			return none, Domain(err)
		}
		return of(w), nil
	}
}
