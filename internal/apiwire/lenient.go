package apiwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/batchd/batchd/internal/money"
)

// The service's answers are known only from public clients (see
// public-api-notes.md and docs/ach-wire.md), which show numbers as
// strings, strings as numbers, 0/1 for booleans and PHP's [] for an empty
// object. The readers below accept all of those; the clients' exported
// types hold plain Go values.

// Text reads a JSON string, number or boolean (kept as its literal
// text), null, and an empty array or object (PHP's encoding of "nothing",
// read as ""). A string's text is not trimmed.
func Text(b []byte) (string, error) {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return "", errors.New("empty value")
	case b[0] == '"':
		if in, ok := plainString(b); ok {
			return string(in), nil
		}
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return "", err
		}
		return v, nil
	case IsEmptyJSON(b):
		return "", nil
	case b[0] == '{' || b[0] == '[':
		return "", fmt.Errorf("want a string, got %s", KindOf(b))
	}
	return string(b), nil // number, true, false
}

// plainString returns the text inside the JSON string b when it needs no
// unescaping, which is when encoding/json would return those very bytes:
// no escape, no control character and valid UTF-8. Otherwise ok is false
// and the caller lets encoding/json read it.
func plainString(b []byte) (text []byte, ok bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return nil, false
	}
	text = b[1 : len(b)-1]
	ascii := true
	for _, c := range text {
		switch {
		case c == '"' || c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	if !ascii && !utf8.Valid(text) {
		return nil, false
	}
	return text, true
}

// Integer reads an integer given as a JSON number or a string holding one
// ("15", "15.0", " 15 "); null and "" read as 0. Anything else is an error,
// because a wrong page number silently read as 0 would end a listing early.
func Integer(b []byte) (int64, error) {
	b = bytes.TrimSpace(b)
	if v, ok := plainInteger(b); ok {
		return v, nil
	}
	if len(b) == 0 {
		return 0, errors.New("empty value")
	}
	if IsEmptyJSON(b) {
		return 0, nil
	}
	text := string(b)
	if b[0] == '"' {
		if err := json.Unmarshal(b, &text); err != nil {
			return 0, err
		}
		text = strings.TrimSpace(text)
		if text == "" {
			return 0, nil
		}
	}
	return ParseInteger(text)
}

// plainInteger reads the common forms of an integer, 1 to 18 decimal
// digits bare or in quotes, without allocating; anything else is left to
// ParseInteger, which reads these forms to the same value.
func plainInteger(b []byte) (int64, bool) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// ParseInteger reads a decimal integer, also written as a float literal
// with no fractional part (as some JSON encoders write every number).
func ParseInteger(s string) (int64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("not an integer: %.40q", s)
	}
	return int64(f), nil
}

// Bool reads true/false, a number (non-zero is true), and the strings
// BoolText knows ("1", "0", "true", "false", "yes", "no" in any case);
// null and "" are false.
func Bool(b []byte) (bool, error) {
	b = bytes.TrimSpace(b)
	switch string(b) { // the forms the service uses, without allocating
	case "0", `"0"`, "false":
		return false, nil
	case "1", `"1"`, "true":
		return true, nil
	}
	if len(b) == 0 {
		return false, errors.New("empty value")
	}
	if IsEmptyJSON(b) {
		return false, nil
	}
	switch b[0] {
	case 't', 'f':
		var x bool
		if err := json.Unmarshal(b, &x); err != nil {
			return false, err
		}
		return x, nil
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return false, err
		}
		x, ok := BoolText(s)
		if !ok {
			return false, fmt.Errorf("not a boolean: %.40q", s)
		}
		return x, nil
	case '{', '[':
		return false, fmt.Errorf("want a boolean, got %s", KindOf(b))
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return false, fmt.Errorf("not a boolean: %.40q", b)
	}
	return f != 0, nil
}

// BoolText reads the words of a boolean in any case (1/0, true/false,
// yes/no, y/n, t/f, on/off; "" is false) and any number (non-zero is
// true). ok is false for anything else.
func BoolText(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "y", "t", "on":
		return true, true
	case "0", "false", "no", "n", "f", "off", "":
		return false, true
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		return f != 0, true
	}
	return false, false
}

// Cents reads an amount; null, "" and PHP's [] read as 0, and anything
// else that is not an exact decimal is an error: an amount is never
// guessed. An amount in the service's usual form, digits with at most two
// decimals, bare or quoted, is read by money.Parse, which gives exactly
// what money.ParseWire gives for that form. Every other form goes through
// money.Cents, that is money.ParseWire: an exponent is read, and digits
// beyond the cent are rounded away only when they are a float artefact
// within 0.000001 of a whole cent (0.29000000000000004 is 29 cents,
// 12.340000000000001 is 1234); a real fraction of a cent such as 0.285 is
// an error that says so.
func Cents(b []byte) (money.Cents, error) {
	b = bytes.TrimSpace(b)
	if IsEmptyJSON(b) || bytes.Equal(b, []byte(`""`)) {
		return 0, nil
	}
	if d, ok := plainDecimal(b); ok {
		if v, err := money.Parse(string(d)); err == nil {
			return v, nil
		}
	}
	var v money.Cents
	if err := v.UnmarshalJSON(b); err != nil {
		return 0, err
	}
	return v, nil
}

// plainDecimal returns the amount in b when it is 1 to 15 digits,
// optionally followed by a point and one or two digits, bare or quoted:
// the form money.Parse reads, short enough to be far from any limit of
// money.ParseWire.
func plainDecimal(b []byte) ([]byte, bool) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	whole := 0
	for whole < len(b) && b[whole] >= '0' && b[whole] <= '9' {
		whole++
	}
	if whole == 0 || whole > 15 {
		return nil, false
	}
	if whole == len(b) {
		return b, true
	}
	frac := b[whole+1:]
	if b[whole] != '.' || len(frac) == 0 || len(frac) > 2 {
		return nil, false
	}
	for _, c := range frac {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	return b, true
}

// IsEmptyJSON reports the values a PHP service sends for "nothing".
func IsEmptyJSON(b []byte) bool {
	switch string(b) {
	case "null", "[]", "{}":
		return true
	}
	return false
}

// KindOf names the JSON container b starts: "an object" or "an array".
func KindOf(b []byte) string {
	if len(b) > 0 && b[0] == '{' {
		return "an object"
	}
	return "an array"
}

// FirstError keeps the first of the errors noted.
type FirstError struct{ Err error }

// Note keeps err when it is the first error.
func (f *FirstError) Note(err error) {
	if f.Err == nil {
		f.Err = err
	}
}

// The functions below read one raw member value, nil when the member is
// absent. The loose ones give the zero value for anything unreadable; the
// strict ones also return the error, naming the member key.

// LooseText is the trimmed text of raw, "" when absent or unreadable.
func LooseText(raw []byte) string {
	if raw == nil {
		return ""
	}
	s, _ := Text(raw)
	return strings.TrimSpace(s)
}

// StrictText is the trimmed text of raw; unreadable text is an error naming key.
func StrictText(key string, raw []byte) (string, error) {
	if raw == nil {
		return "", nil
	}
	s, err := Text(raw)
	if err != nil {
		return "", FieldError(key, err)
	}
	return strings.TrimSpace(s), nil
}

// LooseInt is the integer of raw, 0 when absent or unreadable.
func LooseInt(raw []byte) int {
	if raw == nil {
		return 0
	}
	n, _ := Integer(raw)
	return int(n)
}

// StrictInt is the integer of raw; an unreadable one is an error naming key.
func StrictInt(key string, raw []byte) (int, error) {
	if raw == nil {
		return 0, nil
	}
	n, err := Integer(raw)
	if err != nil {
		return 0, FieldError(key, err)
	}
	return int(n), nil
}

// LooseBool is the boolean of raw, false when absent or unreadable.
func LooseBool(raw []byte) bool {
	if raw == nil {
		return false
	}
	v, _ := Bool(raw)
	return v
}

// StrictCents is the amount of raw; an unreadable one is an error naming key.
func StrictCents(key string, raw []byte) (money.Cents, error) {
	if raw == nil {
		return 0, nil
	}
	c, err := Cents(raw)
	if err != nil {
		return 0, FieldError(key, err)
	}
	return c, nil
}

// FieldError names the member key whose value could not be read.
func FieldError(key string, err error) error {
	return fmt.Errorf("field %q: %w", key, err)
}
