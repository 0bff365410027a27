package echeck

import (
	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/money"
)

// fields reads the members of one object. Lookups named strict* are for the
// fields batchd acts on (identifiers, amounts, status, paging): a value
// that cannot be read records an error in Err. The other lookups are best
// effort: a value of an unexpected type leaves the zero value, so that an
// odd peripheral field never turns a created check into an unreadable
// answer. The same rules, applied to raw values rather than looked up by
// key, are apiwire's Loose and Strict readers, which the check decoder uses.
type fields struct {
	m object
	apiwire.FirstError
}

func (f *fields) str(key string) string { return apiwire.LooseText(f.m[key]) }

func (f *fields) strictStr(key string) string {
	s, err := apiwire.StrictText(key, f.m[key])
	f.Note(err)
	return s
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

func (f *fields) strictInt(key string) int {
	n, err := apiwire.StrictInt(key, f.m[key])
	f.Note(err)
	return n
}

func (f *fields) strictCents(key string) money.Cents {
	c, err := apiwire.StrictCents(key, f.m[key])
	f.Note(err)
	return c
}
