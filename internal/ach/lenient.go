package ach

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/redact"
)

// The ACH answers are known only from the wire contract (docs/ach-wire.md)
// and from public clients, which show numbers as strings, 0/1 for
// booleans, ids under several names and statuses in any case. apiwire's
// lenient readers read those; the helpers below are the ACH client's own
// rules on top of them: text is trimmed, "NaN" is no boolean, integers
// stay within 32 bits, and a field may have several names.

// textOf is apiwire.Text with a string's text trimmed.
func textOf(b []byte) (string, error) {
	s, err := apiwire.Text(b)
	return strings.TrimSpace(s), err
}

// boolOf reads true/false, a number (non-zero is true), and the strings
// "1", "0", "true", "false", "yes", "no" in any case; null and "" are
// false.
func boolOf(b []byte) (bool, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return false, errors.New("empty value")
	}
	if apiwire.IsEmptyJSON(b) {
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

// parseBoolText is apiwire.BoolText, except that NaN is no boolean.
func parseBoolText(s string) (value, ok bool) {
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && math.IsNaN(f) {
		return false, false
	}
	return apiwire.BoolText(s)
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
		if o, ok := apiwire.ObjectOf(m[k]); ok {
			return o
		}
	}
	return nil
}
