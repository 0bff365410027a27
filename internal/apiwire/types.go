package apiwire

import (
	"bytes"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/batchd/batchd/internal/money"
)

// The types below are the lenient readers as json.Unmarshaler, so that an
// answer decodes into a plain struct with a JSON library. UnmarshalJSON
// never fails: the reason a value could not be read is kept in Err, and
// the caller decides whether the member is strict (Strict*) or loose (V
// alone). Failing inside UnmarshalJSON would stop the library at the first
// odd peripheral member, and would not keep the last of a repeated key.

// Str is a loose member read by Text, trimmed; "" when unreadable.
type Str string

// UnmarshalJSON reads b by Text.
func (s *Str) UnmarshalJSON(b []byte) error {
	v, _ := Text(b)
	*s = Str(strings.TrimSpace(v))
	return nil
}

// UnmarshalJSONFrom is UnmarshalJSON reading a string as the decoder's
// token, which it has already checked and unescapes only when needed.
func (s *Str) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, _, err := readText(dec)
	*s = Str(v)
	return err
}

// StrictStr is a member read by Text, trimmed, with the reason it was
// unreadable.
type StrictStr struct {
	V   string
	Err error
}

// UnmarshalJSON reads b by Text.
func (s *StrictStr) UnmarshalJSON(b []byte) error {
	v, err := Text(b)
	s.V, s.Err = strings.TrimSpace(v), err
	return nil
}

// UnmarshalJSONFrom is Str's, keeping the reason.
func (s *StrictStr) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var err error
	s.V, s.Err, err = readText(dec)
	return err
}

// readText reads the next value as Text does, trimmed; bad is why it is
// no text, err a syntax error of the input.
func readText(dec *jsontext.Decoder) (v string, bad, err error) {
	if dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		return strings.TrimSpace(tok.String()), nil, err
	}
	b, err := dec.ReadValue()
	if err != nil {
		return "", nil, err
	}
	v, bad = Text(b)
	return strings.TrimSpace(v), bad, nil
}

// Strict returns V, noting in e the error naming key if it was unreadable.
func (s StrictStr) Strict(key string, e *FirstError) string {
	noteField(e, key, s.Err)
	return s.V
}

// Int is a member read by Integer.
type Int struct {
	V   int
	Err error
}

// UnmarshalJSON reads b by Integer.
func (n *Int) UnmarshalJSON(b []byte) error {
	v, err := Integer(b)
	n.V, n.Err = int(v), err
	return nil
}

// Strict returns V, noting in e the error naming key if it was unreadable.
func (n Int) Strict(key string, e *FirstError) int {
	noteField(e, key, n.Err)
	return n.V
}

// Flag is a member read by Bool; an unreadable one is false.
type Flag bool

// UnmarshalJSON reads b by Bool.
func (f *Flag) UnmarshalJSON(b []byte) error {
	v, _ := Bool(b)
	*f = Flag(v)
	return nil
}

// Amount is a member read by Cents.
type Amount struct {
	V   money.Cents
	Err error
}

// UnmarshalJSON reads b by Cents.
func (a *Amount) UnmarshalJSON(b []byte) error {
	a.V, a.Err = Cents(b)
	return nil
}

// Strict returns V, noting in e the error naming key if it was unreadable.
func (a Amount) Strict(key string, e *FirstError) money.Cents {
	noteField(e, key, a.Err)
	return a.V
}

// Obj is a member that counts only when it is a non-empty object (as
// ObjectOf tells), decoded into T; OK is false for anything else.
type Obj[T any] struct {
	V  T
	OK bool
}

// UnmarshalJSON decodes b into V when it is a non-empty object.
func (o *Obj[T]) UnmarshalJSON(b []byte) error {
	var v T
	o.V, o.OK = v, false
	if IsObject(b) && Unmarshal(b, &v) == nil {
		o.V, o.OK = v, true
	}
	return nil
}

// UnmarshalJSONFrom is UnmarshalJSON without reading the object twice.
func (o *Obj[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var v T
	o.V, o.OK = v, false
	if dec.PeekKind() != '{' {
		return dec.SkipValue()
	}
	if empty, known := emptyObjectAhead(dec.UnreadBuffer()); !known {
		b, err := dec.ReadValue()
		if err != nil {
			return err
		}
		return o.UnmarshalJSON(b)
	} else if empty {
		return dec.SkipValue()
	}
	o.OK = true
	return json.UnmarshalDecode(dec, &o.V)
}

// emptyObjectAhead reads the unread input after a peek at an object: a
// delimiter and space, then the object. known is false when the input
// held there ends before telling whether it is {}.
func emptyObjectAhead(b []byte) (empty, known bool) {
	i := bytes.IndexByte(b, '{')
	if i < 0 {
		return false, false
	}
	rest := bytes.TrimLeft(b[i+1:], " \t\r\n")
	return len(rest) > 0 && rest[0] == '}', len(rest) > 0
}

// List is a member holding a list, read as ListOf reads it, each element
// decoded into T; Err is set when the member is not a list.
type List[T any] struct {
	V   []T
	Err error
}

// UnmarshalJSONFrom is UnmarshalJSON without reading an array twice.
func (l *List[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == '[' {
		// A page holds at most 100 entries (spec 2.7); room for them up
		// front spares the copies of a slice grown one doubling at a time.
		l.V, l.Err = make([]T, 0, 100), nil
		return json.UnmarshalDecode(dec, &l.V)
	}
	b, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return l.UnmarshalJSON(b)
}

// UnmarshalJSON decodes the elements of b into V.
func (l *List[T]) UnmarshalJSON(b []byte) error {
	l.V, l.Err = nil, nil
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '[' {
		l.Err = Unmarshal(b, &l.V)
		return nil
	}
	items, err := ListOf(b)
	l.V, l.Err = make([]T, len(items)), err
	for i, it := range items {
		if err := Unmarshal(it, &l.V[i]); err != nil && l.Err == nil {
			l.Err = err
		}
	}
	return nil
}

// IsObject reports whether b, a valid JSON value, is an object with at
// least one member.
func IsObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 1 && b[0] == '{' && bytes.TrimSpace(b[1:])[0] != '}'
}

func noteField(e *FirstError, key string, err error) {
	if err != nil {
		e.Note(FieldError(key, err))
	}
}
