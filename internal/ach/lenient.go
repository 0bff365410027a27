package ach

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/redact"
)

// The ACH answers are known only from the wire contract (docs/ach-wire.md)
// and from public clients, which show numbers as strings, 0/1 for
// booleans, ids under several names and statuses in any case. The helpers
// below read all of those. They are a deliberately small local version of
// internal/echeck's lenient decoder: the ACH answers are few and short, so
// plain encoding/json does the walking, and only the value rules are
// repeated here.

// object is one decoded JSON object, still raw below the first level. A
// nil value means the member is absent.
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
	if m == nil {
		m = object{}
	}
	return m, nil
}

// isEmptyJSON reports the values a PHP service sends for "nothing".
func isEmptyJSON(b []byte) bool {
	switch string(b) {
	case "null", "[]", "{}":
		return true
	}
	return false
}

// objectOf returns raw as an object when it is a non-empty JSON object.
// Absent, null, false, "" and [] all mean "no object".
func objectOf(raw json.RawMessage) (object, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var m object
	if json.Unmarshal(raw, &m) != nil || len(m) == 0 {
		return nil, false
	}
	return m, true
}

// listOf returns the elements of a JSON array. A PHP array with gaps in its
// keys arrives as an object keyed "0", "1", ...; its values come back in
// key order. Absent, null and "" give no elements.
func listOf(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isEmptyJSON(raw) || string(raw) == `""` {
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

// textOf reads a JSON string, number or boolean (kept as its literal
// text); null and PHP's empty [] or {} read as "". A non-empty object or
// array is an error.
func textOf(b []byte) (string, error) {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return "", errors.New("empty value")
	case b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return "", err
		}
		return strings.TrimSpace(v), nil
	case isEmptyJSON(b):
		return "", nil
	case b[0] == '{':
		return "", errors.New("want a string, got an object")
	case b[0] == '[':
		return "", errors.New("want a string, got an array")
	}
	return string(b), nil // number, true, false
}

// boolOf reads true/false, a number (non-zero is true), and the strings
// "1", "0", "true", "false", "yes", "no" in any case; null and "" are
// false.
func boolOf(b []byte) (bool, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return false, errors.New("empty value")
	}
	if isEmptyJSON(b) {
		return false, nil
	}
	s, err := textOf(b)
	if err != nil {
		return false, err
	}
	v, ok := parseBoolText(s)
	if !ok {
		return false, fmt.Errorf("not a boolean: %.40q", s)
	}
	return v, nil
}

func parseBoolText(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "y", "t", "on":
		return true, true
	case "0", "false", "no", "n", "f", "off", "":
		return false, true
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !math.IsNaN(f) {
		return f != 0, true
	}
	return false, false
}

// integerOf reads an integer given as a JSON number or a string holding
// one ("15", "15.0"); null and "" read as 0. Anything else is an error: a
// wrong page number silently read as 0 would end a listing early.
func integerOf(b []byte) (int, error) {
	s, err := textOf(b)
	if err != nil {
		return 0, err
	}
	if s == "" {
		return 0, nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil && v >= math.MinInt32 && v <= math.MaxInt32 {
		return int(v), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, fmt.Errorf("not an integer: %.40q", s)
	}
	return int(f), nil
}

// fields reads the members of one object. The strict lookups are for the
// fields batchd acts on (identifiers, status, paging): a value that cannot
// be read records an error. The other lookups are best effort, so that an
// odd peripheral field never turns a created customer or funding source
// into an unreadable answer.
type fields struct {
	m   object
	err error
}

func (f *fields) note(key string, err error) {
	if f.err == nil && err != nil {
		f.err = fmt.Errorf("field %q: %w", key, err)
	}
}

// str returns the first non-empty readable text among keys.
func (f *fields) str(keys ...string) string {
	for _, k := range keys {
		if raw := f.m[k]; raw != nil {
			if s, err := textOf(raw); err == nil && s != "" {
				return s
			}
		}
	}
	return ""
}

// strictStr returns the first non-empty text among keys; a present key
// whose value is not text (an object, an array) is an error.
func (f *fields) strictStr(keys ...string) string {
	for _, k := range keys {
		raw := f.m[k]
		if raw == nil {
			continue
		}
		s, err := textOf(raw)
		if err != nil {
			f.note(k, err)
			return ""
		}
		if s != "" {
			return s
		}
	}
	return ""
}

// boolean returns the first present readable boolean among keys.
func (f *fields) boolean(keys ...string) bool {
	for _, k := range keys {
		if raw := f.m[k]; raw != nil {
			if v, err := boolOf(raw); err == nil {
				return v
			}
		}
	}
	return false
}

// strictBool is boolean with an error for an unreadable value.
func (f *fields) strictBool(key string) (v, present bool) {
	raw := f.m[key]
	if raw == nil {
		return false, false
	}
	v, err := boolOf(raw)
	f.note(key, err)
	return v, err == nil
}

func (f *fields) strictInt(key string) int {
	raw := f.m[key]
	if raw == nil {
		return 0
	}
	n, err := integerOf(raw)
	f.note(key, err)
	return n
}

// dateLayouts are the date forms seen in answers: the contract's
// MM/DD/YYYY for funding sources and YYYY-MM-DD HH:MM:SS for customers,
// and what a tidier service would send.
var dateLayouts = []string{"01/02/2006", time.DateTime, time.DateOnly, time.RFC3339, "01/02/2006 15:04:05"}

// dateOf reads a date in any of dateLayouts as UTC; anything else is the
// zero time, because no decision of batchd rests on it.
func dateOf(s string) time.Time {
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// last4 keeps at most the trailing digits redact allows of an account
// number the service sent, in case it sent more than four.
func last4(s string) string {
	if len(s) <= 4 {
		return s
	}
	return redact.Last4(s)
}

// nested returns the object under the first of keys present as a
// non-empty object, else nil.
func nested(m object, keys ...string) object {
	for _, k := range keys {
		if o, ok := objectOf(m[k]); ok {
			return o
		}
	}
	return nil
}
