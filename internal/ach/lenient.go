package ach

import (
	"cmp"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/redact"
)

// The ACH answers are known only from the wire contract (docs/ach-wire.md)
// and from public clients, which show numbers as strings, 0/1 for
// booleans, ids under several names and statuses in any case. apiwire's
// lenient rules read those (apiwire.Field); the helpers below add the ACH
// client's own: a field may have several names, and ids and statuses
// are strict where other fields are loose.

// textOf is apiwire.Text with a string's text trimmed.
func textOf(b []byte) (string, error) {
	s, err := apiwire.Text(b)
	return strings.TrimSpace(s), err
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

// str returns the first non-empty readable text among keys.
func (f *fields) str(keys ...string) string {
	for _, k := range keys {
		var bad error
		if s := apiwire.Field[string](f.m, k, &bad); s != "" {
			return s
		}
	}
	return ""
}

// strictStr returns the first non-empty text among keys; a present key
// whose value is not text (an object, an array) is an error.
func (f *fields) strictStr(keys ...string) string {
	for _, k := range keys {
		var bad error
		if s := apiwire.Field[string](f.m, k, &bad); s != "" || bad != nil {
			f.err = cmp.Or(f.err, bad)
			return s
		}
	}
	return ""
}

// boolean returns the first present readable boolean among keys.
func (f *fields) boolean(keys ...string) bool {
	for _, k := range keys {
		var bad error
		if v := apiwire.Field[bool](f.m, k, &bad); f.m[k] != nil && bad == nil {
			return v
		}
	}
	return false
}

// strictBool is boolean of one key, with an error for an unreadable value.
func (f *fields) strictBool(key string) (v, present bool) {
	var bad error
	v = apiwire.Field[bool](f.m, key, &bad)
	f.err = cmp.Or(f.err, bad)
	return v, f.m[key] != nil && bad == nil
}

func (f *fields) strictInt(key string) int { return apiwire.Field[int](f.m, key, &f.err) }

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

// inner returns the object under the first of keys present as a
// non-empty object (nested), else m itself: an answer may wrap its object
// in an envelope or send it bare.
func inner(m object, keys ...string) object {
	if o := nested(m, keys...); o != nil {
		return o
	}
	return m
}
