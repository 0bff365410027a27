package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/batchd/batchd/internal/money"
)

// dateLayout is the wire form of calendar dates.
const dateLayout = "2006-01-02"

// fields reads typed fields from params and keeps the first validation
// failure, so that a validator reads as a list of field rules and the
// client is told about the first field that broke one. After a failure
// every reader returns a zero value.
type fields struct {
	p   params
	err *apiError
}

func (f *fields) fail(name, format string, args ...any) {
	if f.err == nil {
		f.err = badField(name, format, args...)
	}
}

// raw returns the field's text. JSON strings are unquoted; JSON numbers
// are returned as written only when numOK, because a number where text is
// expected usually means a lost leading zero (routing numbers).
func (f *fields) raw(name string, numOK bool) (string, bool) {
	if f.err != nil {
		return "", false
	}
	v, ok := f.p.get(name)
	if !ok {
		return "", false
	}
	if !v.isJSON {
		return v.text, true
	}
	switch c := v.raw[0]; {
	case c == '"' && bytes.IndexByte(v.raw, '\\') < 0:
		// The object was validated as JSON, so a string token without
		// escapes is its own text between the quotes.
		return string(v.raw[1 : len(v.raw)-1]), true
	case c == '"':
		var s string
		if err := json.Unmarshal(v.raw, &s); err != nil {
			f.fail(name, "must be a string")
			return "", false
		}
		return s, true
	case numOK && (c == '-' || (c >= '0' && c <= '9')):
		return string(v.raw), true
	case numOK:
		f.fail(name, "must be a number or a string")
		return "", false
	}
	f.fail(name, "must be a string")
	return "", false
}

// text reads a string field of at most max characters; surrounding white
// space is dropped and an empty value counts as absent.
func (f *fields) text(name string, required bool, max int) string {
	return f.textLen(name, required, 0, max)
}

// textLen is text with a minimum length too.
func (f *fields) textLen(name string, required bool, min, max int) string {
	s, _ := f.raw(name, false)
	return f.check(name, strings.TrimSpace(s), required, min, max)
}

// present reports whether field name has a value s to check: not when an
// earlier field failed, nor when s is empty, which fails a required field.
func (f *fields) present(name, s string, required bool) bool {
	if f.err != nil {
		return false
	}
	if s == "" && required {
		f.fail(name, "required")
	}
	return s != ""
}

func (f *fields) check(name, s string, required bool, min, max int) string {
	if !f.present(name, s, required) {
		return ""
	}
	if !utf8.ValidString(s) {
		f.fail(name, "must be valid UTF-8 text")
		return ""
	}
	n := utf8.RuneCountInString(s)
	switch {
	case min == max && n != min:
		f.fail(name, "must be exactly %d characters", min)
	case n < min:
		f.fail(name, "must be at least %d characters", min)
	case n > max:
		f.fail(name, "must be at most %d characters", max)
	}
	if f.err != nil {
		return ""
	}
	return s
}

// digits reads a string of decimal digits of min to max length. A JSON
// number is accepted only when numOK (check numbers).
func (f *fields) digits(name string, required, numOK bool, min, max int) string {
	s, _ := f.raw(name, numOK)
	s = strings.TrimSpace(s)
	if !f.present(name, s, required) {
		return ""
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			f.fail(name, "must contain digits only")
			return ""
		}
	}
	if min == max && len(s) != min {
		f.fail(name, "must be exactly %d digits", min)
	} else if len(s) < min || len(s) > max {
		f.fail(name, "must be %d to %d digits", min, max)
	}
	if f.err != nil {
		return ""
	}
	return s
}

// flag reads a boolean: true/false, 1/0, or those words or digits as text.
func (f *fields) flag(name string) bool {
	s, ok := f.raw(name, true)
	if !ok {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1":
		return true
	case "false", "0", "":
		return false
	}
	f.fail(name, "must be true or false")
	return false
}

// jsonBool lets flag accept JSON true/false, which raw refuses as text.
func (f *fields) jsonBool(name string) (bool, bool) {
	v, ok := f.p.get(name)
	if !ok || !v.isJSON {
		return false, false
	}
	switch string(v.raw) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// boolean reads a boolean field in any of the accepted spellings.
func (f *fields) boolean(name string) bool {
	if f.err != nil {
		return false
	}
	if b, ok := f.jsonBool(name); ok {
		return b
	}
	return f.flag(name)
}

// integer reads a whole number in [min, max], given as a JSON number or as
// text. present reports whether the field was given.
func (f *fields) integer(name string, min, max int64) (n int64, present bool) {
	s, ok := f.raw(name, true)
	s = strings.TrimSpace(s)
	if !ok || s == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f.fail(name, "must be a whole number")
		return 0, false
	}
	if n < min || n > max {
		f.fail(name, "must be between %d and %d", min, max)
		return 0, false
	}
	return n, true
}

// enum reads a string that must be one of allowed (compared exactly).
func (f *fields) enum(name string, allowed ...string) string {
	s := f.text(name, false, 1<<16)
	if s == "" {
		return ""
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	f.fail(name, "must be one of %s", strings.Join(allowed, ", "))
	return ""
}

// amount reads a money amount > 0 with at most two decimal places, given
// as a JSON number or as text. Exponents and signs are refused: an amount
// that needs them is not a check amount.
func (f *fields) amount(name string, required bool) (money.Cents, bool) {
	s, _ := f.raw(name, true)
	s = strings.TrimSpace(s)
	if !f.present(name, s, required) {
		return 0, false
	}
	c, err := parseAmount(s)
	switch {
	case errors.Is(err, money.ErrPrecision):
		f.fail(name, "must have at most 2 decimal places")
	case errors.Is(err, money.ErrRange):
		f.fail(name, "too large")
	case err != nil:
		f.fail(name, "must be a decimal number such as 12.34")
	case c <= 0:
		f.fail(name, "must be greater than 0")
	}
	if f.err != nil {
		return 0, false
	}
	return c, true
}

// parseAmount reads a plain decimal such as "12.34". Trailing zeros past
// the second decimal place are harmless ("1.500" is 1.50); a leading minus
// is read so that the caller can say "must be greater than 0".
func parseAmount(s string) (money.Cents, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if whole, frac, ok := strings.Cut(s, "."); ok && len(frac) > 2 {
		s = whole + "." + frac[:2] + strings.TrimRight(frac[2:], "0")
	}
	c, err := money.Parse(s)
	if err != nil {
		return 0, err
	}
	if neg {
		return -c, nil
	}
	return c, nil
}

// date reads a YYYY-MM-DD date. present reports whether it was given.
func (f *fields) date(name string) (d time.Time, present bool) {
	s := f.text(name, false, 1<<16)
	if s == "" {
		return time.Time{}, false
	}
	d, err := time.Parse(dateLayout, s)
	if err != nil || len(s) != len(dateLayout) {
		f.fail(name, "must be a date YYYY-MM-DD")
		return time.Time{}, false
	}
	return d, true
}

// email reads an e-mail address: at most max characters, one "@" with text
// on both sides and no white space.
func (f *fields) email(name string, max int) string {
	s := f.text(name, false, max)
	if s == "" {
		return ""
	}
	local, domain, ok := strings.Cut(s, "@")
	if !ok || local == "" || domain == "" || strings.Contains(domain, "@") || strings.ContainsAny(s, " \t\r\n") {
		f.fail(name, "must be an e-mail address")
		return ""
	}
	return s
}

// webURL reads an absolute http or https URL.
func (f *fields) webURL(name string) string {
	s := f.text(name, false, 1<<16)
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		f.fail(name, "must be an absolute http or https URL")
		return ""
	}
	return s
}
