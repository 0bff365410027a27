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
	"github.com/go-json-experiment/json/jsontext"
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
		return unquote(b)
	case IsEmptyJSON(b):
		return "", nil
	case b[0] == '{' || b[0] == '[':
		return "", fmt.Errorf("want a string, got %s", KindOf(b))
	}
	return string(b), nil // number, true, false
}

// unquote reads the JSON string b (b[0] is '"'). Text with no escape, no
// control character and valid UTF-8 is its own value, read without a
// copy. Other text goes to jsontext.AppendUnquote, and what that refuses
// (invalid UTF-8, which encoding/json replaces, or no valid string) to
// encoding/json, for its replacement and its error text.
func unquote(b []byte) (string, error) {
	if in := b[1:max(1, len(b)-1)]; len(b) > 1 && b[len(b)-1] == '"' && !bytes.ContainsFunc(in, special) {
		return string(in), nil
	}
	if s, err := jsontext.AppendUnquote(nil, b); err == nil {
		return string(s), nil
	}
	var v string
	err := json.Unmarshal(b, &v)
	return v, err
}

// special reports the runes a JSON string's text cannot hold as they are.
func special(r rune) bool { return r == '"' || r == '\\' || r < 0x20 || r == utf8.RuneError }

// Integer reads an integer given as a JSON number or a string holding one
// ("15", "15.0", " 15 "); null and "" read as 0. Anything else is an error,
// because a wrong page number silently read as 0 would end a listing early.
func Integer(b []byte) (int64, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0, errors.New("empty value")
	}
	if IsEmptyJSON(b) {
		return 0, nil
	}
	text := string(b)
	if b[0] == '"' {
		var err error
		if text, err = unquote(b); err != nil {
			return 0, err
		}
		if text = strings.TrimSpace(text); text == "" {
			return 0, nil
		}
	}
	return ParseInteger(text)
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
		s, err := unquote(b)
		if err != nil {
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
// guessed. money.Cents reads it (money.ParseWire): an exponent is read,
// and digits beyond the cent are rounded away only when they are a float
// artefact within 0.000001 of a whole cent (0.29000000000000004 is 29
// cents, 12.340000000000001 is 1234); a real fraction of a cent such as
// 0.285 is an error that says so.
func Cents(b []byte) (money.Cents, error) {
	b = bytes.TrimSpace(b)
	if IsEmptyJSON(b) || bytes.Equal(b, []byte(`""`)) {
		return 0, nil
	}
	var v money.Cents
	if err := v.UnmarshalJSON(b); err != nil {
		return 0, err
	}
	return v, nil
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
