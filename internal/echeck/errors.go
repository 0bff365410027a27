package echeck

import (
	"strings"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
)

// Class tells a caller what it may do after a failed call. The zero Class
// is not a class: ClassOf returns it only for a nil error.
type Class int

const (
	// Retryable: the service did not act on the request (it was never
	// fully sent, or the service said so with 429, 408, 500 or 503 on a
	// call that creates nothing). Sending it again is safe.
	Retryable = Class(apiwire.Retryable)
	// Ambiguous: a create was sent but its answer was lost or unreadable,
	// so the object may or may not exist. The caller must find out (look
	// the check up by label and number) before sending it again.
	Ambiguous = Class(apiwire.Ambiguous)
	// Permanent: the service refused this request (400, 402, 404, ...).
	// Sending it again will fail the same way.
	Permanent = Class(apiwire.Permanent)
	// Fatal: the key is missing, wrong or lacks permission (401, 403).
	// Every further call will fail too; the run should stop.
	Fatal = Class(apiwire.Fatal)
)

// String returns the lower-case name of c.
func (c Class) String() string { return apiwire.Class(c).String() }

// Error is every error the Client returns. Its text never holds the API
// key, nor a bank account number or account token given in the request,
// even when the service echoes them.
type Error struct {
	Op         string        // operation, such as "check.create" (see the Op constants)
	Status     int           // HTTP status; 0 when no response was read
	Message    string        // the service's "message", or an excerpt of a non-JSON body
	Code       string        // the service's "code", when it sent one
	RetryAfter time.Duration // from a Retry-After header; 0 when absent
	Class      Class         // what the caller may do next
	Err        error         // the underlying network or decoding error, if any
}

// Error describes the failure in one line, ending with its class.
func (e *Error) Error() string {
	return (&apiwire.Failure{Op: e.Op, Status: e.Status, Message: e.Message, Code: e.Code,
		RetryAfter: e.RetryAfter, Class: apiwire.Class(e.Class), Err: e.Err}).Text("echeck")
}

// Unwrap returns the underlying error, so errors.Is(err,
// context.DeadlineExceeded) works through an *Error.
func (e *Error) Unwrap() error { return e.Err }

// ClassOf classifies any error:
//   - nil gives the zero Class;
//   - an *Error anywhere in the chain gives its Class. The client already
//     folded cancellation into it: a create whose request had been written
//     when the caller's context ended is Ambiguous, anything else Retryable;
//   - context.Canceled or context.DeadlineExceeded without an *Error gives
//     Retryable: the client wraps every error it returns, so such an error
//     did not come from a request in flight;
//   - any other error gives Ambiguous. It did not come from this client,
//     and Ambiguous is the one class under which a caller neither resends
//     blindly nor gives up: it finds out first.
func ClassOf(err error) Class {
	return Class(apiwire.ClassOf(err, func(e *Error) apiwire.Class { return apiwire.Class(e.Class) }))
}

// apiMessage reads the "message" and "code" of an error body. A body that
// is not a JSON object, or has no message, is quoted instead. Laravel-style
// validation details ("errors": {"field": ["reason"]}) are appended, since
// the bare message ("The given data was invalid.") does not name the field.
func apiMessage(body []byte, status int) (msg, code string) {
	msg, code, _ = refusalMessage(body, status)
	return msg, code
}

// refusalMessage is apiMessage for apiwire.Options.Message.
func refusalMessage(body []byte, status int) (msg, code string, m object) {
	return apiwire.Message(body, status, func(m object) string {
		msg := apiwire.LooseText(m["message"])
		if msg == "" {
			if s := apiwire.LooseText(m["error"]); s != "" {
				if _, isBool := apiwire.BoolText(s); !isBool {
					msg = s
				}
			}
		}
		if detail := validationDetail(m); detail != "" {
			msg = strings.TrimSpace(msg + " (" + detail + ")")
		}
		return msg
	})
}

// validationDetail returns "field: reason" for the first field (in name
// order) of a Laravel-style "errors" object.
func validationDetail(m object) string {
	errs, ok := apiwire.ObjectOf(m["errors"])
	if !ok {
		return ""
	}
	var first string
	for k := range errs {
		if first == "" || k < first {
			first = k
		}
	}
	var reason string
	if l, err := apiwire.ListOf(errs[first]); err == nil && len(l) > 0 {
		reason, _ = apiwire.Text(l[0])
	} else {
		reason, _ = apiwire.Text(errs[first])
	}
	if reason == "" {
		return first
	}
	return first + ": " + reason
}

// errorFlagged reports whether a 2xx body says it failed: "error" is true
// (or a non-empty message string), or "success" is false, which a string
// of blanks also says.
func errorFlagged(m object) bool { return apiwire.ErrorFlagged(m, true) }
