package tokenize

import (
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

// TestNames pins the rule README "Tokenized accounts" states: the file's
// first_name and last_name when it gives both, else the name's last word
// is the last name and the rest the first, a single word being both.
func TestNames(t *testing.T) {
	for _, c := range []struct {
		p           payment.Payment
		first, last string
	}{
		{payment.Payment{Name: "Ada Lovelace"}, "Ada", "Lovelace"},
		{payment.Payment{Name: "  Mary  Ann   Smith "}, "Mary Ann", "Smith"},
		{payment.Payment{Name: "Acme Widgets Inc."}, "Acme Widgets", "Inc."},
		{payment.Payment{Name: "Acme"}, "Acme", "Acme"},
		{payment.Payment{Name: "Acme Widgets Inc.", FirstName: "Jane", LastName: "Roe"}, "Jane", "Roe"},
		{payment.Payment{Name: "Ada Lovelace", FirstName: "Augusta"}, "Ada", "Lovelace"}, // one cell alone is not used
		{payment.Payment{}, "", ""},
	} {
		if first, last := Names(&c.p); first != c.first || last != c.last {
			t.Errorf("Names(%q, %q, %q) = %q, %q; want %q, %q", c.p.Name, c.p.FirstName, c.p.LastName, first, last, c.first, c.last)
		}
	}
}
