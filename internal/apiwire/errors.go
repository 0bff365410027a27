package apiwire

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

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
