package payment

import (
	"fmt"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/money"
)

// Check is what the service says of one check, as far as batchd needs it.
// The adapter of the service fills it in from whatever shape the answer
// had (internal/echeck decodes leniently).
type Check struct {
	ID               string
	Label            string
	Number           string
	Amount           money.Cents
	Memo             string // as the service echoes it; "" when it does not
	Name             string // the payee's name, likewise
	Status           Status
	Created          time.Time // the check's creation time at the service, UTC; zero when not given
	Risk             string    // basic verification's risk result, when asked for
	FundConfirmation string    // fund confirmation's verdict, when asked for
	LinkID           string    // the checkout token of the payment link it was paid through; "" for batchd's own
}

// Identity returns the identity the check carries.
func (c *Check) Identity() Identity {
	return Identity{Label: c.Label, Number: c.Number, Amount: c.Amount}
}

// Identity is what a check carries that lets batchd recognise it as a
// row's own. The API has no idempotency key, so after a lost answer this
// is all batchd has to find the check it may have made.
//
// The service may normalise what it stores and echoes (see the sandbox's
// quirks): it may keep the number as an integer, trim the label or change
// its case, and echo the amount as a float. The comparison therefore
// ignores exactly those differences and no others:
//   - labels are compared after trimming spaces, case-insensitively;
//   - numbers are compared as numbers: leading zeros do not count;
//   - amounts are compared in exact cents.
type Identity struct {
	Label  string
	Number string
	Amount money.Cents
}

// Same reports whether two identities name the same check.
func (id Identity) Same(other Identity) bool {
	return id.Amount == other.Amount && SameLabel(id.Label, other.Label) && SameNumber(id.Number, other.Number)
}

// Key is a map key shared by every identity that has the same label and
// number as id (the amount left out): identities with equal Keys and equal
// amounts are Same. Reconcile indexes rows in doubt by it.
func (id Identity) Key() string {
	return labelKey(id.Label) + "\x00" + NumberKey(id.Number)
}

// Differences lists, in words for a report, how other differs from id by
// the rule of Same. It is empty exactly when Same is true.
func (id Identity) Differences(other Identity) []string {
	var d []string
	if id.Amount != other.Amount {
		d = append(d, fmt.Sprintf("amount: batchd %s, service %s", id.Amount, other.Amount))
	}
	if !SameNumber(id.Number, other.Number) {
		d = append(d, fmt.Sprintf("number: batchd %s, service %s", id.Number, other.Number))
	}
	if !SameLabel(id.Label, other.Label) {
		d = append(d, fmt.Sprintf("label: batchd %q, service %q", id.Label, other.Label))
	}
	return d
}

// SameLabel compares labels as the service may store them: trimmed, in
// any case. It compares the same keys Identity.Key uses, so the two never
// disagree.
func SameLabel(a, b string) bool { return labelKey(a) == labelKey(b) }

// SameNumber compares check numbers as numbers: "0000123" and "123" are
// the same check number. Text that is not all digits is compared trimmed,
// as it is.
func SameNumber(a, b string) bool { return NumberKey(a) == NumberKey(b) }

func labelKey(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// NumberKey is a check number in the form SameNumber compares: trimmed,
// and without leading zeros when it is all digits. Whatever must agree
// with the identity rule (ingest's duplicate numbers, an index) uses it.
func NumberKey(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "" // no number is not the number 0
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return s
		}
	}
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return "0"
	}
	return s
}

// Owner says which row, if any, a check is already bound to in the ledger.
type Owner struct {
	Key   RowKey
	Owned bool
}

// Belongs is the one rule for "this check is this row's". It is the only
// place batchd decides it, for submit's lookup after a lost answer and for
// reconcile alike: c belongs to row when c carries the row's identity
// (Identity.Same) and no other row already owns c. A check owned by the
// row itself belongs to it.
func Belongs(row *Row, c *Check, owner Owner) bool {
	if owner.Owned && owner.Key != row.Key {
		return false
	}
	return row.Identity().Same(c.Identity())
}
