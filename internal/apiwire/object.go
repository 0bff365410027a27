package apiwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// An answer is decoded in two steps. DecodeObject checks the whole body
// once with json.Valid, which is exactly the check json.Unmarshal makes, so
// an answer is accepted or refused as encoding/json would. After that,
// every value below it is a slice of a document known to be valid, and is
// walked by the small scanner at the end of this file instead of being
// decoded again by encoding/json: a list answer used to be scanned once
// per nesting level and once more per field, which made decoding, not the
// network, the cost of paging through checks.

// Object is one decoded JSON object, still raw below the first level. Keys
// are unescaped as encoding/json unescapes them; a key given twice keeps
// its last value. Values are never empty, so a nil value means "absent".
// They are slices of the answer, capped so that appending to one cannot
// overwrite its neighbour, and they are valid JSON because the answer was.
type Object = map[string]json.RawMessage

// errMalformed reports input the scanner cannot walk. Only input that was
// not checked with json.Valid first can produce it.
var errMalformed = errors.New("malformed JSON")

// DecodeObject reads b as a JSON object; anything else is an error.
func DecodeObject(b []byte) (Object, error) {
	b, err := ValidObject(b)
	if err != nil {
		return nil, err
	}
	return MembersOf(b)
}

// ValidObject returns b without surrounding space when it is a valid JSON
// object, and otherwise the error DecodeObject reports.
func ValidObject(b []byte) ([]byte, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, errors.New("response is not a JSON object")
	}
	if !json.Valid(b) {
		var m Object // for encoding/json's account of what is wrong
		err := json.Unmarshal(b, &m)
		if err == nil {
			err = errMalformed
		}
		return nil, fmt.Errorf("response is not valid JSON: %w", err)
	}
	return b, nil
}

// ObjectOf returns raw as an object when it is a non-empty JSON object.
// Absent, null, false, "" and [] all mean "no object" without an error.
// raw must come from an object (it is not validated again).
func ObjectOf(raw json.RawMessage) (Object, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	m, err := MembersOf(raw)
	if err != nil || len(m) == 0 {
		return nil, false
	}
	return m, true
}

// MembersOf maps the members of the JSON object b (which starts with '{').
func MembersOf(b []byte) (Object, error) {
	m := Object{}
	it := objectIter{b: b}
	for key, val, ok := it.next(); ok; key, val, ok = it.next() {
		m[string(key)] = val
	}
	return m, it.err
}

// ListOf returns the elements of a JSON array. A PHP array with gaps in
// its keys arrives as an object keyed "0", "1", ...; its values are
// returned in key order. Absent, null and "" give no elements. raw must
// come from an object (it is not validated again).
func ListOf(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || IsEmptyJSON(raw) || bytes.Equal(raw, []byte(`""`)) {
		return nil, nil
	}
	switch raw[0] {
	case '[':
		var l []json.RawMessage
		it := arrayIter{b: raw}
		for v, ok := it.next(); ok; v, ok = it.next() {
			l = append(l, v)
		}
		return l, it.err
	case '{':
		m, err := MembersOf(raw)
		if err != nil {
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

// Pick walks the object b and keeps in into[i] the value of each member
// whose key index maps to i (the last one, when a key repeats, as in an
// object map); index returns -1 for a key not wanted. It returns the
// number of members, so that {} can be told from an object without the
// wanted keys. b must be a value from a valid document.
func Pick(b []byte, index func(key []byte) int, into [][]byte) (int, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return 0, errors.New("not an object")
	}
	it := objectIter{b: b}
	for key, val, ok := it.next(); ok; key, val, ok = it.next() {
		if i := index(key); i >= 0 {
			into[i] = val
		}
	}
	return it.n, it.err
}

// objectIter walks the members of the JSON object b, which starts with
// '{'. next returns each key (unescaped) and raw value in order; after the
// last one it returns false, with err set if b was malformed.
type objectIter struct {
	b   []byte
	i   int // offset of the next byte to read; 0 before the '{'
	n   int // members returned so far
	err error
}

func (it *objectIter) next() (key, val []byte, ok bool) {
	b, i := it.b, it.i
	if it.err != nil || i >= len(b) {
		return nil, nil, false
	}
	if i == 0 {
		i = 1 // past the '{'
	}
	if i = skipSpace(b, i); i < len(b) && b[i] == '}' {
		it.i = len(b)
		return nil, nil, false
	}
	if it.n > 0 {
		if i >= len(b) || b[i] != ',' {
			return it.fail()
		}
		i = skipSpace(b, i+1)
	}
	if i >= len(b) || b[i] != '"' {
		return it.fail()
	}
	end, plain := stringEnd(b, i)
	if end < 0 {
		return it.fail()
	}
	key = b[i+1 : end-1]
	if !plain {
		var s string
		if json.Unmarshal(b[i:end], &s) != nil {
			return it.fail()
		}
		key = []byte(s)
	}
	if i = skipSpace(b, end); i >= len(b) || b[i] != ':' {
		return it.fail()
	}
	i = skipSpace(b, i+1)
	if end = valueEnd(b, i); end < 0 {
		return it.fail()
	}
	it.i, it.n = end, it.n+1
	return key, b[i:end:end], true
}

func (it *objectIter) fail() ([]byte, []byte, bool) {
	it.err = errMalformed
	return nil, nil, false
}

// arrayIter walks the elements of the JSON array b, which starts with '['.
type arrayIter struct {
	b   []byte
	i   int // offset of the next byte to read; 0 before the '['
	n   int // elements returned so far
	err error
}

func (it *arrayIter) next() (val []byte, ok bool) {
	b, i := it.b, it.i
	if it.err != nil || i >= len(b) {
		return nil, false
	}
	if i == 0 {
		i = 1 // past the '['
	}
	if i = skipSpace(b, i); i < len(b) && b[i] == ']' {
		it.i = len(b)
		return nil, false
	}
	if it.n > 0 {
		if i >= len(b) || b[i] != ',' {
			it.err = errMalformed
			return nil, false
		}
		i = skipSpace(b, i+1)
	}
	end := valueEnd(b, i)
	if end < 0 {
		it.err = errMalformed
		return nil, false
	}
	it.i, it.n = end, it.n+1
	return b[i:end:end], true
}

// skipSpace returns the offset of the first byte at or after i that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// stringEnd returns the offset just past the JSON string that starts at
// b[i] == '"', or -1 when it does not end. plain reports that its text
// needs no unescaping: no backslash and no byte outside ASCII.
func stringEnd(b []byte, i int) (end int, plain bool) {
	plain = true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, plain
		case c == '\\':
			plain = false
			j++ // the escaped byte cannot end the string
		case c >= 0x80:
			plain = false
		}
	}
	return -1, false
}

// valueEnd returns the offset just past the JSON value that starts at
// b[i], or -1 when there is none. It finds the end; it does not check
// what lies before it.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return quoteEnd(b, i)
	case '{', '[':
		return containerEnd(b, i)
	}
	j := i
	for j < len(b) && !isDelimiter(b[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// quoteEnd is stringEnd without telling whether the string is plain.
func quoteEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			return j + 1
		case '\\':
			j++ // the escaped byte cannot end the string
		}
	}
	return -1
}

// containerEnd returns the offset just past the object or array that
// starts at b[i], by counting brackets outside strings.
func containerEnd(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			end := quoteEnd(b, j)
			if end < 0 {
				return -1
			}
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

// isDelimiter reports the bytes that end a number or a literal.
func isDelimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ':', ' ', '\n', '\r', '\t', '"', '{', '[':
		return true
	}
	return false
}
