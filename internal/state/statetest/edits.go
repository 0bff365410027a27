package statetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// Edits: an edit line's intent is recorded once, with the check's values
// before and after, before its edit leaves; its first final outcome
// stands; the row follows the edit once, its identity moving with it.
var editCases = []testCase{
	{"IntentOnceThenSettled", testEditIntent},
	{"RefusesBadLines", testEditRefuses},
	{"RowFollowsTheEdit", testEdited},
}

func editLine(file string, line int, checkID string, row payment.RowKey, before, after payment.EditFields) payment.Edit {
	return payment.Edit{CheckLine: payment.CheckLine[payment.EditOutcome]{Key: payment.EditKey{File: file, Line: line},
		CheckID: checkID, Row: row, Outcome: payment.EditSent, Sent: Epoch}, Before: before, After: after}
}

func testEditIntent(t *testing.T, be Backend) {
	f := open(t, be)
	row := payment.RowKey{Batch: 1, Line: 2}
	before := payment.EditFields{Amount: 1000, Number: "7", Label: "L", Memo: "m", Name: "n"}
	after := before
	after.Amount = 1250
	rec, fresh, err := payment.EditLines.Intent(f, editLine("ed12", 2, "chk-1", row, before, after), Epoch)
	if err != nil || !fresh || rec.Outcome != payment.EditSent {
		t.Fatalf("first intent: %+v fresh=%v err=%v", rec, fresh, err)
	}
	again, fresh, err := payment.EditLines.Intent(f, editLine("ed12", 2, "chk-1", row, after, after), Epoch)
	if err != nil || fresh || again.Before != before || again.After != after {
		t.Fatalf("second intent must return the first: %+v fresh=%v err=%v", again, fresh, err)
	}
	f.reopen()
	settle := func(o payment.EditOutcome, st payment.Status) (payment.Edit, error) {
		return payment.EditLines.Settle(f, rec.Key, o, st, "", Epoch)
	}
	if got, err := settle(payment.EditEdited, payment.StatusInProcess); err != nil || got.Outcome != payment.EditEdited {
		t.Fatalf("settled: %+v err=%v", got, err)
	}
	if got, err := settle(payment.EditTooLate, payment.StatusPrinted); err != nil || got.Outcome != payment.EditEdited {
		t.Fatalf("a settled line must keep its first outcome: %+v err=%v", got, err)
	}
	if lines, err := payment.EditLines.List(f, "ed12"); err != nil || len(lines) != 1 || lines[0].After.Amount != 1250 {
		t.Fatalf("edits of ed12: %+v err=%v", lines, err)
	}
	if lines, err := payment.CancelLines.List(f, "ed12"); err != nil || len(lines) != 0 {
		t.Fatalf("an edit line is no cancel line: %+v err=%v", lines, err)
	}
	f.invariants()
}

func testEditRefuses(t *testing.T, be Backend) {
	f := open(t, be)
	row := payment.RowKey{Batch: 1, Line: 2}
	var v payment.EditFields
	for _, e := range []payment.Edit{
		editLine("", 1, "chk", row, v, v), editLine("ab", 1, "", row, v, v), editLine("ab", 1, "chk", payment.RowKey{}, v, v),
	} {
		if _, _, err := payment.EditLines.Intent(f, e, Epoch); err == nil {
			t.Errorf("intent %+v recorded", e)
		}
	}
	if _, err := payment.EditLines.Settle(f, payment.EditKey{File: "ab", Line: 1}, payment.EditEdited, "", "", Epoch); !errors.Is(err, payment.ErrNotFound) {
		t.Errorf("settling a line without an intent: %v", err)
	}
	f.invariants()
}

// testEdited: the row takes the new values and identity, once, with a
// history step; a row with no check cannot be edited.
func testEdited(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "a.csv", 2)
	k := key(b, 2)
	r := submit(t, d.DB, k, "c1", payment.StatusInProcess)
	before := payment.EditFieldsOf(r)
	after := before
	after.Amount, after.Number, after.Label, after.Memo = 1250, "4242", "wk49", "inv 9"
	got, err := d.Edited(k, after, before.Changes(after))
	if err != nil || payment.EditFieldsOf(got) != after {
		t.Fatalf("edited row %+v err=%v", got, err)
	}
	d.reopen()
	r = row(t, d.DB, k)
	last := r.History[len(r.History)-1].Note
	if r.Identity() != (payment.Identity{Label: "wk49", Number: "4242", Amount: money.Cents(1250)}) || r.Payment.Label != "wk49" ||
		r.Payment.Number != "4242" || !strings.HasPrefix(last, payment.EditedNote) || !strings.Contains(last, "amount 0.01 → 12.50") {
		t.Fatalf("row after the edit: identity %+v payment %+v note %q", r.Identity(), r.Payment, last)
	}
	steps := len(r.History)
	if _, err := d.Edited(k, after, "again"); err != nil || len(row(t, d.DB, k).History) != steps {
		t.Fatalf("the same edit again must add no step: %v", err)
	}
	if _, err := d.Edited(key(b, 3), after, "no check"); !errors.Is(err, payment.ErrIllegal) {
		t.Fatalf("a pending row edited: %v", err)
	}
	d.invariants()
}
