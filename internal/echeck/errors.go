package echeck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Class tells a caller what it may do after a failed call. The zero Class
// is not a class: ClassOf returns it only for a nil error.
type Class int

const (
	// Retryable: the service did not act on the request (it was never
	// fully sent, or the service said so with 429, 408, 500 or 503 on a
	// call that creates nothing). Sending it again is safe.
	Retryable Class = iota + 1
	// Ambiguous: a create was sent but its answer was lost or unreadable,
	// so the object may or may not exist. The caller must find out (look
	// the check up by label and number) before sending it again.
	Ambiguous
	// Permanent: the service refused this request (400, 402, 404, ...).
	// Sending it again will fail the same way.
	Permanent
	// Fatal: the key is missing, wrong or lacks permission (401, 403).
	// Every further call will fail too; the run should stop.
	Fatal
)

// String returns the lower-case name of c.
func (c Class) String() string {
	switch c {
	case Retryable:
		return "retryable"
	case Ambiguous:
		return "ambiguous"
	case Permanent:
		return "permanent"
	case Fatal:
		return "fatal"
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

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
	var b strings.Builder
	b.WriteString("echeck ")
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
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Retryable
	}
	return Ambiguous
}

// statusClass classifies a non-2xx answer. A create that got a 5xx may
// have been carried out before the server failed, so it is Ambiguous; a
// read, edit or delete can simply be sent again. 408 means the server did
// not receive the whole request, so it is Retryable even for a create. Any
// other status outside 2xx, 4xx and 5xx (a redirect, which the client never
// follows) is Ambiguous for a create, because it does not say whether the
// object was made, and Permanent otherwise.
func statusClass(create bool, status int) Class {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return Fatal
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout:
		return Retryable
	case status >= 500 && status <= 599:
		if create {
			return Ambiguous
		}
		return Retryable
	case status >= 400 && status <= 499:
		return Permanent
	case create:
		return Ambiguous
	}
	return Permanent
}

// maxRetryAfter caps a Retry-After, so that a hostile or broken header
// cannot park batchd for years.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter reads a Retry-After value (RFC 9110 10.2.3): delta
// seconds, or an HTTP-date taken relative to now. A date in the past gives
// 0; a value that is neither form gives ok == false.
func parseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter, true // too many digits for int64: still "later"
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d = t.Sub(now)
	switch {
	case d < 0:
		return 0, true
	case d > maxRetryAfter:
		return maxRetryAfter, true
	}
	return d, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// maxExcerpt bounds the part of a non-JSON body quoted in an Error.
const maxExcerpt = 200

// excerpt makes at most maxExcerpt bytes of b safe for one log line: valid
// UTF-8, control characters as spaces, runs of space collapsed.
func excerpt(b []byte) string {
	cut := len(b) > maxExcerpt
	if cut {
		b = b[:maxExcerpt]
		// Drop a character cut in half rather than show it as U+FFFD.
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	if cut {
		s += "…"
	}
	return s
}

// apiMessage reads the "message" and "code" of an error body. A body that
// is not a JSON object, or has no message, is quoted instead. Laravel-style
// validation details ("errors": {"field": ["reason"]}) are appended, since
// the bare message ("The given data was invalid.") does not name the field.
func apiMessage(body []byte, status int) (msg, code string) {
	m, err := decodeObject(body)
	if err != nil {
		if s := excerpt(body); s != "" {
			return s, ""
		}
		return http.StatusText(status), ""
	}
	f := fields{m: m}
	msg = f.str("message")
	if msg == "" {
		if s := f.str("error"); s != "" {
			if _, isBool := parseBoolText(s); !isBool {
				msg = s
			}
		}
	}
	if detail := validationDetail(m); detail != "" {
		msg = strings.TrimSpace(msg + " (" + detail + ")")
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return excerpt([]byte(msg)), excerpt([]byte(f.str("code")))
}

// validationDetail returns "field: reason" for the first field (in name
// order) of a Laravel-style "errors" object.
func validationDetail(m object) string {
	errs, ok := objectOf(m["errors"])
	if !ok {
		return ""
	}
	var first string
	for k := range errs {
		if first == "" || k < first {
			first = k
		}
	}
	var reason flexString
	if l, err := listOf(errs[first]); err == nil && len(l) > 0 {
		_ = reason.UnmarshalJSON(l[0])
	} else {
		_ = reason.UnmarshalJSON(errs[first])
	}
	if reason == "" {
		return first
	}
	return first + ": " + string(reason)
}

// errorFlagged reports whether a 2xx body says it failed: "error" is true
// (or a non-empty message string), or "success" is false.
func errorFlagged(m object) bool {
	if raw, ok := m["error"]; ok {
		raw = bytes.TrimSpace(raw)
		var s flexString
		switch {
		case len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') && !isEmptyJSON(raw):
			return true // an error object or list
		case s.UnmarshalJSON(raw) == nil:
			if v, known := parseBoolText(string(s)); v || !known {
				return true
			}
		}
	}
	if raw, ok := m["success"]; ok {
		raw = bytes.TrimSpace(raw)
		var v flexBool
		if !isEmptyJSON(raw) && string(raw) != `""` && v.UnmarshalJSON(raw) == nil && !bool(v) {
			return true
		}
	}
	return false
}
