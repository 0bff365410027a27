package apiwire

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

// Class tells a caller what it may do after a failed call; echeck.Class
// and ach.Class have the same values and meaning. The zero Class is not a
// class.
type Class int

const (
	// Retryable: the service did not act on the request. Sending it
	// again is safe.
	Retryable Class = iota + 1
	// Ambiguous: a call with an effect was sent but its answer was lost or
	// unreadable; the caller must find out before sending it again.
	Ambiguous
	// Permanent: the service refused this request; sending it again will
	// fail the same way.
	Permanent
	// Fatal: the key is missing, wrong or lacks permission (401, 403).
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

// Classify classifies a non-2xx answer. A call with an effect that got a
// 5xx may have been carried out before the server failed, so it is
// Ambiguous; any other call can simply be sent again. 408 means the
// server did not receive the whole request, so it is Retryable even for a
// call with an effect. Any other status outside 2xx, 4xx and 5xx (a
// redirect, which the client never follows) is Ambiguous for a call with
// an effect, because it does not say whether the effect happened, and
// Permanent otherwise.
func Classify(effect bool, status int) Class {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return Fatal
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout:
		return Retryable
	case status >= 500 && status <= 599:
		if effect {
			return Ambiguous
		}
		return Retryable
	case status >= 400 && status <= 499:
		return Permanent
	case effect:
		return Ambiguous
	}
	return Permanent
}

// ClassOf classifies any error for a client whose errors are E, with
// class reading an E's Class:
//   - nil gives the zero Class;
//   - an E anywhere in the chain gives its class;
//   - context.Canceled or context.DeadlineExceeded without an E gives
//     Retryable: the client wraps every error it returns, so such an error
//     did not come from a request in flight;
//   - any other error gives Ambiguous: it did not come from the client,
//     and Ambiguous is the one class under which a caller neither resends
//     blindly nor gives up: it finds out first.
func ClassOf[E error](err error, class func(E) Class) Class {
	if err == nil {
		return 0
	}
	var e E
	if errors.As(err, &e) {
		return class(e)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Retryable
	}
	return Ambiguous
}

// Text describes f in one line, after the client's name, ending with its
// class: "echeck check.create: HTTP 400 code 7: message: cause (permanent)".
func (f *Failure) Text(client string) string {
	var b strings.Builder
	b.WriteString(client)
	b.WriteString(" ")
	b.WriteString(f.Op)
	if f.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", f.Status)
	}
	if f.Code != "" {
		fmt.Fprintf(&b, " code %s", f.Code)
	}
	if f.Message != "" {
		b.WriteString(": ")
		b.WriteString(f.Message)
	}
	if f.Err != nil {
		b.WriteString(": ")
		b.WriteString(f.Err.Error())
	}
	fmt.Fprintf(&b, " (%s", f.Class)
	if f.RetryAfter > 0 {
		fmt.Fprintf(&b, ", retry after %s", f.RetryAfter)
	}
	b.WriteString(")")
	return b.String()
}

// MaxRetryAfter caps a Retry-After, so that a hostile or broken header
// cannot park batchd for years.
const MaxRetryAfter = 24 * time.Hour

// ParseRetryAfter reads a Retry-After value (RFC 9110 10.2.3): delta
// seconds, or an HTTP-date taken relative to now. A date in the past gives
// 0; a value that is neither form gives ok == false.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if IsDigits(v) {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter, true // too many digits for int64: still "later"
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), MaxRetryAfter), true
}

// IsDigits reports a non-empty string of ASCII digits.
func IsDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ValidID accepts the identifiers the service issues (UUIDs, numbers,
// tokens) and anything of the same alphabet up to 128 characters, and
// refuses whatever could change a path, such as "/" or "..".
func ValidID(id string) error {
	if id == "" || len(id) > 128 {
		return fmt.Errorf("%q: want 1 to 128 characters", Excerpt(id))
	}
	for i := 0; i < len(id); i++ {
		ch := id[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
			return fmt.Errorf("%q: only letters, digits, '-' and '_' are allowed", Excerpt(id))
		}
	}
	return nil
}

// MaxExcerpt bounds the part of a body quoted in an error.
const MaxExcerpt = 200

// Excerpt makes at most MaxExcerpt bytes of s safe for one log line: valid
// UTF-8, control characters as spaces, runs of space collapsed.
func Excerpt(s string) string {
	cut := len(s) > MaxExcerpt
	if cut {
		s = s[:MaxExcerpt]
		// Drop a character cut in half rather than show it as U+FFFD.
		for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
			if utf8.RuneStart(s[i]) {
				if !utf8.FullRuneInString(s[i:]) {
					s = s[:i]
				}
				break
			}
		}
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	if cut {
		s += "…"
	}
	return s
}

// Message reads a refusal's body: find returns the message of its object
// ("" for none); a body that is not a JSON object is quoted instead, and
// a missing message is the status text. msg and code come back as
// excerpts; m is the body's object, nil when it is not one.
func Message(body []byte, status int, find func(m Object) string) (msg, code string, m Object) {
	m, err := DecodeObject(body)
	if err != nil {
		if s := Excerpt(string(body)); s != "" {
			return s, "", nil
		}
		return http.StatusText(status), "", nil
	}
	msg = find(m)
	if msg == "" {
		msg = http.StatusText(status)
	}
	return Excerpt(msg), Excerpt(LooseText(m["code"])), m
}

// ErrorFlagged reports whether a 2xx body says it failed: "error" is true
// (or a non-empty message string, object or list), or "success" is false.
// A "success" string of blanks reads as false only when blankIsFalse (the
// eCheck client's rule); otherwise it says nothing (the ACH client's).
func ErrorFlagged(m Object, blankIsFalse bool) bool {
	if raw, ok := m["error"]; ok {
		raw = bytes.TrimSpace(raw)
		if len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') && !IsEmptyJSON(raw) {
			return true // an error object or list
		}
		if s, err := Text(raw); err == nil {
			if v, known := BoolText(s); v || !known {
				return true
			}
		}
	}
	if raw, ok := m["success"]; ok {
		raw = bytes.TrimSpace(raw)
		if IsEmptyJSON(raw) || string(raw) == `""` {
			return false
		}
		if v, err := Bool(raw); err == nil && !v {
			return blankIsFalse || LooseText(raw) != ""
		}
	}
	return false
}
