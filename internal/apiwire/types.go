package apiwire

import (
	"bytes"
	"strings"

	"github.com/batchd/batchd/internal/money"
)

// The types below are the lenient readers as json.Unmarshaler, so that an
// answer decodes into a plain struct with a JSON library. UnmarshalJSON
// never fails: the reason a value could not be read is kept in Err, and
// the caller decides whether the member is strict (Strict*) or loose (V
// alone). Failing inside UnmarshalJSON would stop the library at the first
// odd peripheral member, and would not keep the last of a repeated key.

// Str is a member read by Text, trimmed.
type Str struct {
	V   string
	Err error
}

// UnmarshalJSON reads b by Text.
func (s *Str) UnmarshalJSON(b []byte) error {
	v, err := Text(b)
	s.V, s.Err = strings.TrimSpace(v), err
	return nil
}

// Strict returns V, noting in e the error naming key if it was unreadable.
func (s Str) Strict(key string, e *FirstError) string {
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
