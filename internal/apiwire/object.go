package apiwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
)

// Answers are decoded by github.com/go-json-experiment/json (Unmarshal),
// which accepts the documents encoding/json accepts with the options
// Unmarshal sets (FuzzObject holds it to that). A document it refuses goes
// to encoding/json, so that an invalid answer is reported in the words it
// always was; should encoding/json take one v2 refused, its members are
// decoded again from encoding/json's map, and a value v2 still refuses
// makes the answer unreadable: refused, never misread.

// Object is one decoded JSON object, still raw below the first level. Keys
// are unescaped as encoding/json unescapes them; a key given twice keeps
// its last value. Values are copies, never empty, so a nil value means
// "absent".
type Object = map[string]json.RawMessage

// DecodeObject reads b as a JSON object; anything else is an error.
func DecodeObject(b []byte) (Object, error) {
	var m Object
	return m, Decode(b, &m)
}

// Decode reads b, which must be a JSON object, into v: an Object or a
// struct of the lenient types.
func Decode(b []byte, v any) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return errors.New("response is not a JSON object")
	}
	if Unmarshal(b, v) == nil {
		return nil
	}
	reflect.ValueOf(v).Elem().SetZero()
	var m Object
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("response is not valid JSON: %w", err)
	}
	return FromObject(m, v)
}

// FromObject decodes the members of m into v, as Decode would the object.
// The values are written back as they came (json.Marshal would compact
// them, and "[ ]" is not the empty "[]" to the lenient readers).
func FromObject(m Object, v any) error {
	b := []byte{'{'}
	for k, val := range m {
		key, err := json.Marshal(k)
		if err != nil {
			return err
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(append(append(b, key...), ':'), val...)
	}
	return Unmarshal(append(b, '}'), v)
}

// ObjectOf returns raw as an object when it is a non-empty JSON object.
// Absent, null, false, "" and [] all mean "no object" without an error.
// raw must be valid JSON (a value of an Object).
func ObjectOf(raw json.RawMessage) (Object, bool) {
	var m Object
	if !IsObject(raw) || Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

// ListOf returns the elements of a JSON array. A PHP array with gaps in
// its keys arrives as an object keyed "0", "1", ...; its values are
// returned in key order. Absent, null and "" give no elements. raw must
// be valid JSON (a value of an Object).
func ListOf(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || IsEmptyJSON(raw) || bytes.Equal(raw, []byte(`""`)) {
		return nil, nil
	}
	switch raw[0] {
	case '[':
		var l []json.RawMessage
		return l, Unmarshal(raw, &l)
	case '{':
		var m Object
		if err := Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return KeyLess(keys[i], keys[j]) })
		l := make([]json.RawMessage, len(keys))
		for i, k := range keys {
			l[i] = m[k]
		}
		return l, nil
	}
	return nil, errors.New("want a list")
}

// KeyLess orders numeric keys numerically and before any other key.
func KeyLess(a, b string) bool {
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
