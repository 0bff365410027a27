package apiwire

import (
	"bytes"
	json1 "encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/batchd/batchd/internal/money"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Answers are decoded by github.com/go-json-experiment/json, which is
// encoding/json/v2 outside the standard library (Go 1.27 makes it stable
// there; the import path is then the only change). The service's answers
// are known only from public clients (public-api-notes.md,
// docs/ach-wire.md), which show numbers as strings, strings as numbers,
// 0/1 for booleans and PHP's [] for an empty object: the rules below
// (Text, Integer, Bool, Cents) read all of those, and Val, Obj and List
// apply them to the members of a wire struct.

// Unmarshal decodes the valid JSON value b into v. Member names match
// exactly (v2's default: "AMOUNT" is not the amount); a repeated member
// keeps its last value and invalid UTF-8 is replaced, as encoding/json does.
func Unmarshal(b []byte, v any) error {
	return json.Unmarshal(b, v, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
}

// Object is one decoded JSON object, raw below the first level; a nil
// value means "absent". Values are copies, never slices of the answer.
type Object = map[string]json1.RawMessage

// DecodeObject reads b as a JSON object; anything else is an error.
func DecodeObject(b []byte) (m Object, err error) {
	err = Decode(b, &m)
	return m, err
}

// Decode reads b, which must be a JSON object, into v (an Object or a
// wire struct). An invalid answer is reported in encoding/json's words,
// as it always was; one encoding/json took but v2 did not (FuzzObject
// has found none) is refused, never misread.
func Decode(b []byte, v any) error {
	if b = bytes.TrimSpace(b); len(b) == 0 || b[0] != '{' {
		return errors.New("response is not a JSON object")
	}
	err := Unmarshal(b, v)
	if err != nil {
		var m Object
		if e1 := json1.Unmarshal(b, &m); e1 != nil {
			err = e1
		}
		return fmt.Errorf("response is not valid JSON: %w", err)
	}
	return nil
}

// Val is a member read by the rule of its type: Text (trimmed), Integer,
// Bool or Cents. Reading never fails the answer: Err keeps why the value
// was unreadable (V is then zero), and the caller decides whether the
// member matters (Strict) or not (V alone).
type Val[T Scalar] struct {
	V   T
	Err error
}

// UnmarshalJSON reads b by the rule of T.
func (v *Val[T]) UnmarshalJSON(b []byte) error {
	var err error
	switch p := any(&v.V).(type) {
	case *string:
		*p, err = Text(b)
		*p = strings.TrimSpace(*p)
	case *int:
		var n int64
		n, err = Integer(b)
		*p = int(n)
	case *bool:
		*p, err = Bool(b)
	case *money.Cents:
		*p, err = Cents(b)
	}
	if v.Err = err; err != nil {
		v.V = *new(T)
	}
	return nil
}

// UnmarshalJSONFrom is UnmarshalJSON, reading a string for a string as
// the decoder's token: checked once, unescaped only when it needs it.
func (v *Val[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if p, ok := any(&v.V).(*string); ok && dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		*p, v.Err = strings.TrimSpace(tok.String()), nil
		return err
	}
	b, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return v.UnmarshalJSON(b)
}

// Loose is a member whose unreadable value is simply zero: a Val
// without the room for its error, which a list's hundred checks with
// twenty such members each would carry for nothing.
type Loose[T Scalar] struct{ V T }

// UnmarshalJSONFrom reads the next value as Val does.
func (l *Loose[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var v Val[T]
	err := v.UnmarshalJSONFrom(dec)
	l.V = v.V
	return err
}

// Strict returns V, keeping in *first the error naming key if V was
// unreadable and *first holds none yet.
func (v Val[T]) Strict(key string, first *error) T {
	if v.Err != nil && *first == nil {
		*first = FieldError(key, v.Err)
	}
	return v.V
}

// Scalar is a Go type the lenient rules read.
type Scalar interface {
	string | int | bool | money.Cents
}

// Field reads member key of m by the rule of T, as a Val member of a wire
// struct is read; absent is zero. See Val.Strict for first.
func Field[T Scalar](m Object, key string, first *error) T {
	var v Val[T]
	if raw, ok := m[key]; ok {
		_ = v.UnmarshalJSON(raw)
	}
	return v.Strict(key, first)
}

// FieldError names the member key whose value could not be read.
func FieldError(key string, err error) error { return fmt.Errorf("field %q: %w", key, err) }

// Obj is a member that counts only when it is a non-empty object (OK),
// decoded into V; anything else (null, "", [], {}, a scalar) is no object.
type Obj[T any] struct {
	V  T
	OK bool
}

// UnmarshalJSONFrom decodes the next value into V when it is a non-empty
// object, in the one pass of the decoder over it.
func (o *Obj[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*o = Obj[T]{}
	if dec.PeekKind() != '{' || emptyAhead(dec.UnreadBuffer()) {
		return dec.SkipValue()
	}
	o.OK = true
	return json.UnmarshalDecode(dec, &o.V)
}

// emptyAhead reports whether the object a decoder has just peeked at is
// {}: its unread buffer holds a delimiter, space, then the object (for
// Unmarshal, which decodes from memory, the rest of the input).
func emptyAhead(b []byte) bool {
	_, rest, _ := bytes.Cut(b, []byte("{"))
	rest = bytes.TrimLeft(rest, " \t\r\n")
	return len(rest) > 0 && rest[0] == '}'
}

// List is a member holding a list as ListOf reads it, each element decoded
// into T; Err says why the member is no list.
type List[T any] struct {
	V   []T
	Err error
}

// UnmarshalJSONFrom decodes the elements of the next value into V; an
// array in the decoder's one pass over it.
func (l *List[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == '[' {
		// A page holds at most 100 entries (spec 2.7): room up front.
		l.V, l.Err = make([]T, 0, 100), nil
		return json.UnmarshalDecode(dec, &l.V)
	}
	b, err := dec.ReadValue()
	if err != nil {
		return err
	}
	items, err := ListOf(json1.RawMessage(b))
	l.V, l.Err = make([]T, len(items)), err
	for i, it := range items {
		_ = Unmarshal(it, &l.V[i]) // valid JSON into lenient types: no error
	}
	return nil
}

// IsObject reports whether b, a valid JSON value, is a non-empty object.
func IsObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 1 && b[0] == '{' && bytes.TrimSpace(b[1:])[0] != '}'
}

// ObjectOf returns raw as an Object when it is a non-empty JSON object.
func ObjectOf(raw json1.RawMessage) (m Object, ok bool) {
	ok = IsObject(raw) && Unmarshal(raw, &m) == nil
	return m, ok
}

// ListOf returns the elements of a JSON array. A PHP array with gaps in
// its keys arrives as an object keyed "0", "1", ...: its values come in
// key order. Absent, null, "", [] and {} give none; raw must be valid JSON.
func ListOf(raw json1.RawMessage) ([]json1.RawMessage, error) {
	var l []json1.RawMessage
	var m Object
	switch raw = bytes.TrimSpace(raw); {
	case len(raw) == 0 || IsEmptyJSON(raw) || string(raw) == `""`:
		return nil, nil
	case raw[0] == '[':
		err := Unmarshal(raw, &l)
		return l, err
	case raw[0] != '{':
		return nil, errors.New("want a list")
	}
	if err := Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	keys := slices.Collect(maps.Keys(m))
	sort.Slice(keys, func(i, j int) bool { return KeyLess(keys[i], keys[j]) })
	for _, k := range keys {
		l = append(l, m[k])
	}
	return l, nil
}

// KeyLess orders numeric keys numerically and before any other key.
func KeyLess(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	if errA == nil && errB == nil {
		return x < y
	}
	return errA == nil && errB != nil || errA != nil && errB != nil && a < b
}

// Text reads a JSON string (not trimmed), a number or boolean as its
// literal text, and null, [] and {} (PHP's "nothing") as "".
func Text(b []byte) (string, error) {
	switch b = bytes.TrimSpace(b); {
	case len(b) == 0:
		return "", errors.New("empty value")
	case b[0] == '"':
		return unquote(b)
	case IsEmptyJSON(b):
		return "", nil
	case b[0] == '{' || b[0] == '[':
		return "", fmt.Errorf("want a string, got %s", KindOf(b))
	}
	return string(b), nil
}

// unquote reads the JSON string b: text with no escape, no control
// character and valid UTF-8 is its own value; other text goes to
// encoding/json, for its replacement of invalid UTF-8 and its error text.
func unquote(b []byte) (string, error) {
	if in := b[1:max(1, len(b)-1)]; len(b) > 1 && b[len(b)-1] == '"' && !bytes.ContainsFunc(in, special) {
		return string(in), nil
	}
	return decodeString(b)
}

// decodeString is unquote's slow path, apart so that its result's escape
// to the heap costs only the strings that take it.
func decodeString(b []byte) (s string, err error) {
	err = json1.Unmarshal(b, &s)
	return s, err
}

// special reports the runes a JSON string's text cannot hold as they are.
func special(r rune) bool { return r == '"' || r == '\\' || r < 0x20 || r == utf8.RuneError }

// Integer reads an integer given as a JSON number or a string holding one
// ("15", "15.0", " 15 "); null and "" read as 0. Anything else is an error:
// a wrong page number silently read as 0 would end a listing early.
func Integer(b []byte) (int64, error) {
	var text string
	switch b = bytes.TrimSpace(b); {
	case len(b) == 0:
		return 0, errors.New("empty value")
	case IsEmptyJSON(b):
		return 0, nil
	case b[0] == '"':
		s, err := unquote(b)
		if text = strings.TrimSpace(s); err != nil || text == "" {
			return 0, err
		}
	default:
		text = string(b)
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

// Bool reads true and false, a number (non-zero is true) and the strings
// BoolText knows; null and "" are false.
func Bool(b []byte) (v bool, err error) {
	switch b = bytes.TrimSpace(b); {
	case len(b) == 0:
		return false, errors.New("empty value")
	case IsEmptyJSON(b):
		return false, nil
	case b[0] == 't' || b[0] == 'f':
		err = json1.Unmarshal(b, &v)
		return v, err
	case b[0] == '{' || b[0] == '[':
		return false, fmt.Errorf("want a boolean, got %s", KindOf(b))
	case b[0] == '"':
		s, err := unquote(b)
		if v, ok := BoolText(s); err != nil || ok {
			return v && err == nil, err
		}
		return false, fmt.Errorf("not a boolean: %.40q", s)
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return false, fmt.Errorf("not a boolean: %.40q", b)
	}
	return f != 0, nil
}

// BoolText reads the words of a boolean in any case (1/0, true/false,
// yes/no, y/n, t/f, on/off; "" is false) and any number but NaN (non-zero
// is true). ok is false for anything else.
func BoolText(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "y", "t", "on":
		return true, true
	case "0", "false", "no", "n", "f", "off", "":
		return false, true
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f != 0, err == nil && !math.IsNaN(f)
}

// Cents reads an amount exactly, never through a float (money.Cents's
// UnmarshalJSON: digits beyond the cent only as a float artefact within
// 0.000001 of a whole cent); null, "", [] and {} read as 0.
func Cents(b []byte) (c money.Cents, err error) {
	if b = bytes.TrimSpace(b); IsEmptyJSON(b) || string(b) == `""` {
		return 0, nil
	}
	if err = c.UnmarshalJSON(b); err != nil {
		return 0, err
	}
	return c, nil
}

// IsEmptyJSON reports the values a PHP service sends for "nothing".
func IsEmptyJSON(b []byte) bool {
	s := string(b)
	return s == "null" || s == "[]" || s == "{}"
}

// KindOf names the JSON container b starts: "an object" or "an array".
func KindOf(b []byte) string {
	if len(b) > 0 && b[0] == '{' {
		return "an object"
	}
	return "an array"
}

// LooseText is the trimmed text of raw, "" when absent or unreadable.
func LooseText(raw []byte) string {
	s, _ := Text(raw)
	return strings.TrimSpace(s)
}
