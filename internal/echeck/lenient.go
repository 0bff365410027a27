package echeck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/batchd/batchd/internal/money"
)

// The service's responses are known only from public clients (see
// public-api-notes.md), which show numbers as strings, strings as numbers,
// 0/1 for booleans and PHP's [] for an empty object. The types below accept
// all of those. They are used only for decoding; the exported types hold
// plain Go values.

// flexString accepts a JSON string, number or boolean (kept as its literal
// text), null, and an empty array or object (PHP's encoding of "nothing").
type flexString string

func (s *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return errors.New("empty value")
	case b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = flexString(v)
	case isEmptyJSON(b):
		*s = ""
	case b[0] == '{' || b[0] == '[':
		return fmt.Errorf("want a string, got %s", kindOf(b))
	default: // number, true, false
		*s = flexString(b)
	}
	return nil
}

// flexInt accepts an integer as a JSON number or a string holding one
// ("15", "15.0", " 15 "); null and "" read as 0. Anything else is an error,
// because a wrong page number silently read as 0 would end a listing early.
type flexInt int64

func (n *flexInt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if isEmptyJSON(b) {
		*n = 0
		return nil
	}
	text := string(b)
	if b[0] == '"' {
		if err := json.Unmarshal(b, &text); err != nil {
			return err
		}
		text = strings.TrimSpace(text)
		if text == "" {
			*n = 0
			return nil
		}
	}
	v, err := parseInteger(text)
	if err != nil {
		return err
	}
	*n = flexInt(v)
	return nil
}

// parseInteger reads a decimal integer, also written as a float literal
// with no fractional part (as some JSON encoders write every number).
func parseInteger(s string) (int64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("not an integer: %.40q", s)
	}
	return int64(f), nil
}

// flexBool accepts true/false, a number (non-zero is true), and the strings
// "1", "0", "true", "false", "yes", "no" in any case; null and "" are false.
type flexBool bool

func (v *flexBool) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if isEmptyJSON(b) {
		*v = false
		return nil
	}
	switch b[0] {
	case 't', 'f':
		var x bool
		if err := json.Unmarshal(b, &x); err != nil {
			return err
		}
		*v = flexBool(x)
		return nil
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		x, ok := parseBoolText(s)
		if !ok {
			return fmt.Errorf("not a boolean: %.40q", s)
		}
		*v = flexBool(x)
		return nil
	case '{', '[':
		return fmt.Errorf("want a boolean, got %s", kindOf(b))
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("not a boolean: %.40q", b)
	}
	*v = f != 0
	return nil
}

func parseBoolText(s string) (value, ok bool) {
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

// flexCents is money.Cents that also reads null, "" and PHP's [] as 0.
// Anything else that is not an exact decimal is an error: an amount is
// never guessed.
type flexCents money.Cents

func (c *flexCents) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if isEmptyJSON(b) || bytes.Equal(b, []byte(`""`)) {
		*c = 0
		return nil
	}
	var v money.Cents
	if err := v.UnmarshalJSON(b); err != nil {
		return err
	}
	*c = flexCents(v)
	return nil
}

// isEmptyJSON reports the values a PHP service sends for "nothing".
func isEmptyJSON(b []byte) bool {
	switch string(b) {
	case "null", "[]", "{}":
		return true
	}
	return false
}

func kindOf(b []byte) string {
	if len(b) > 0 && b[0] == '{' {
		return "an object"
	}
	return "an array"
}

// object is one decoded JSON object, still raw below the first level.
type object = map[string]json.RawMessage

// decodeObject reads b as a JSON object; anything else is an error.
func decodeObject(b []byte) (object, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, errors.New("response is not a JSON object")
	}
	var m object
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("response is not valid JSON: %w", err)
	}
	return m, nil
}

// objectOf returns raw as an object when it is a non-empty JSON object.
// Absent, null, false, "" and [] all mean "no object" without an error.
func objectOf(raw json.RawMessage) (object, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var m object
	if err := json.Unmarshal(raw, &m); err != nil || len(m) == 0 {
		return nil, false
	}
	return m, true
}

// listOf returns the elements of a JSON array. A PHP array with gaps in
// its keys arrives as an object keyed "0", "1", ...; its values are
// returned in key order. Absent, null and "" give no elements.
func listOf(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isEmptyJSON(raw) || bytes.Equal(raw, []byte(`""`)) {
		return nil, nil
	}
	switch raw[0] {
	case '[':
		var l []json.RawMessage
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, err
		}
		return l, nil
	case '{':
		var m object
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
		l := make([]json.RawMessage, len(keys))
		for i, k := range keys {
			l[i] = m[k]
		}
		return l, nil
	}
	return nil, errors.New("want a list")
}

// keyLess orders numeric keys numerically and before any other key.
func keyLess(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		return x < y
	case errA == nil:
		return true
	case errB == nil:
		return false
	}
	return a < b
}

// fields reads the members of one object. Lookups named strict* are for the
// fields batchd acts on (identifiers, amounts, status, paging): a value
// that cannot be read records an error in err. The other lookups are best
// effort: a value of an unexpected type leaves the zero value, so that an
// odd peripheral field never turns a created check into an unreadable
// answer.
type fields struct {
	m   object
	err error
}

func (f *fields) read(key string, v json.Unmarshaler, strict bool) {
	raw, ok := f.m[key]
	if !ok {
		return
	}
	if err := v.UnmarshalJSON(raw); err != nil && strict && f.err == nil {
		f.err = fmt.Errorf("field %q: %w", key, err)
	}
}

func (f *fields) str(key string) string {
	var s flexString
	f.read(key, &s, false)
	return strings.TrimSpace(string(s))
}

func (f *fields) strictStr(key string) string {
	var s flexString
	f.read(key, &s, true)
	return strings.TrimSpace(string(s))
}

// firstStr returns the first non-empty of several spellings of one field.
func (f *fields) firstStr(keys ...string) string {
	for _, k := range keys {
		if s := f.str(k); s != "" {
			return s
		}
	}
	return ""
}

func (f *fields) integer(key string) int {
	var n flexInt
	f.read(key, &n, false)
	return int(n)
}

func (f *fields) strictInt(key string) int {
	var n flexInt
	f.read(key, &n, true)
	return int(n)
}

func (f *fields) boolean(key string) bool {
	var v flexBool
	f.read(key, &v, false)
	return bool(v)
}

func (f *fields) strictCents(key string) money.Cents {
	var c flexCents
	f.read(key, &c, true)
	return money.Cents(c)
}
