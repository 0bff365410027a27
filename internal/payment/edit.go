package payment

import (
	"fmt"
	"strings"

	"github.com/batchd/batchd/internal/money"
)

// Edits. An edit file's line asks batchd to correct one of its checks
// while the service still has it in process (POST /v1/check/edit): its
// amount, number, label, memo, name or e-mail. The ledger keeps each
// line's intent before the request leaves, with the check's values
// before and after, keyed as cancel lines are (the edit file's content
// and the line): a crash between the request and its answer is settled
// by reading the check again and comparing it with both, so an edit is
// never lost and never made twice in a way that changes the outcome.

// EditKey names one line of one edit file, as LineKey names a cancel
// file's: the same key of a line of an applied file.
type EditKey = LineKey

// EditFields are the values of a check an edit may change. They are the
// check's identity (label, number, amount) and the words printed on it.
type EditFields struct {
	Amount money.Cents `json:"amount"`
	Number string      `json:"number"`
	Label  string      `json:"label"`
	Memo   string      `json:"memo"`
	Name   string      `json:"name"`
	Email  string      `json:"email,omitempty"`
}

// EditFieldsOf are row's values an edit may change: its identity as its
// check carries it and its payment's words.
func EditFieldsOf(r *Row) EditFields {
	p := &r.Payment
	return EditFields{Amount: p.Amount, Number: r.Number, Label: r.Label, Memo: p.Memo, Name: p.Name, Email: p.Email}
}

// ApplyTo gives row r the values f: its identity moves to f's label and
// number, so that reconcile and a lookup find the edited check as r's.
// The payment's label and number change only where f changes them (a row
// whose file gave no label keeps the batch's label as its identity only).
func (f EditFields) ApplyTo(r *Row) {
	p := &r.Payment
	if f.Label != r.Label {
		p.Label = f.Label
	}
	if f.Number != r.Number {
		p.Number = f.Number
	}
	r.Label, r.Number = f.Label, f.Number
	p.Amount, p.Memo, p.Name, p.Email = f.Amount, f.Memo, f.Name, f.Email
}

// ShownBy reports whether check c shows the values f, compared as the
// service may echo them (Identity.Same; memo and name trimmed, and only
// when the service echoes them at all).
func (f EditFields) ShownBy(c *Check) bool {
	same := func(want, got string) bool { return got == "" || strings.TrimSpace(want) == strings.TrimSpace(got) }
	return f.Identity().Same(c.Identity()) && same(f.Memo, c.Memo) && same(f.Name, c.Name)
}

// Identity is the identity a check with the values f carries.
func (f EditFields) Identity() Identity {
	return Identity{Label: f.Label, Number: f.Number, Amount: f.Amount}
}

// Changes words how after differs from f, for a report and the row's
// history: "amount 10.00 → 12.50; memo "a" → "b"". Empty when they are
// the same.
func (f EditFields) Changes(after EditFields) string {
	var d []string
	if f.Amount != after.Amount {
		d = append(d, fmt.Sprintf("amount %s → %s", f.Amount, after.Amount))
	}
	for _, c := range []struct{ name, was, now string }{
		{"number", f.Number, after.Number}, {"label", f.Label, after.Label},
		{"memo", f.Memo, after.Memo}, {"name", f.Name, after.Name}, {"email", f.Email, after.Email},
	} {
		if c.was != c.now {
			d = append(d, fmt.Sprintf("%s %q → %q", c.name, c.was, c.now))
		}
	}
	return strings.Join(d, "; ")
}

// EditChange is what one edit line asks: each value it gives replaces the
// check's; an empty one (zero amount) keeps it.
type EditChange EditFields

// Over is the check's values before with c's given values put over them.
func (c EditChange) Over(before EditFields) EditFields {
	after := before
	if c.Amount != 0 {
		after.Amount = c.Amount
	}
	for _, v := range []struct {
		to    *string
		given string
	}{
		{&after.Number, c.Number}, {&after.Label, c.Label}, {&after.Memo, c.Memo},
		{&after.Name, c.Name}, {&after.Email, c.Email},
	} {
		if v.given != "" {
			*v.to = v.given
		}
	}
	return after
}

// EditedNote starts the history note of a row batchd edited by an edit
// file; the rest says what changed.
const EditedNote = "edited by an edit file: "

// EditOutcome is what became of one edit line.
type EditOutcome string

// The edit outcomes. EditSent is the intent: the edit may have left,
// nothing is known of its answer. Every other outcome is final: a line
// settled once is never sent again.
const (
	EditSent     EditOutcome = "sent"
	EditEdited   EditOutcome = "edited"        // the check shows the new values
	EditTooLate  EditOutcome = "too_late"      // printed or deposited: nothing can be edited
	EditFinal    EditOutcome = "already_final" // void, failed or deleted
	EditNotFound EditOutcome = "not_found"     // the service does not know the check
	EditRefused  EditOutcome = "refused"       // refused by batchd's rules or the service
)

// Settled reports whether the outcome is final (anything but the intent).
func (o EditOutcome) Settled() bool { return o != "" && o != EditSent }

// Edit is the ledger's record of one edit line: the check's values
// before and after.
type Edit struct {
	CheckLine[EditOutcome]
	Before EditFields `json:"before"`
	After  EditFields `json:"after"`
}

// EditLines are the edit lines in the ledger. batchd edits only the
// checks of its own rows, whose values it keeps.
var EditLines = NewCheckLines(KindEdits, "edit line", EditSent,
	func(e *Edit) *CheckLine[EditOutcome] { return &e.CheckLine },
	func(e *Edit) string {
		if e.CheckID == "" || e.Row == (RowKey{}) {
			return ", a check id and its row"
		}
		return ""
	})

// RowEditor gives an edited row its new values.
type RowEditor interface {
	// Edited gives row k the values after, with a history step whose
	// note says what changed; a row that already shows them is left as
	// it is.
	Edited(k RowKey, after EditFields, note string) (*Row, error)
}
