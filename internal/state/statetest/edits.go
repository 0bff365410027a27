package statetest

import (
	"errors"
	"strings"
	"testing"
	"time"

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

func testEditIntent(t *testing.T, be Backend) {
	f := open(t, be)
	k := payment.EditKey{File: "ed12", Line: 2}
	before := payment.EditFields{Amount: 1000, Number: "7", Label: "L", Memo: "m", Name: "n"}
	after := before
	after.Amount = 1250
	rec, fresh, err := f.EditIntent(payment.Edit{Key: k, CheckID: "chk-1", Row: payment.RowKey{Batch: 1, Line: 2}, Before: before, After: after})
	if err != nil || !fresh || rec.Outcome != payment.EditSent || !rec.Sent.Equal(Epoch) {
		t.Fatalf("first intent: %+v fresh=%v err=%v", rec, fresh, err)
	}
	f.clock.Add(time.Minute)
	again, fresh, err := f.EditIntent(payment.Edit{Key: k, CheckID: "chk-1", Row: payment.RowKey{Batch: 1, Line: 2}, Before: after, After: after})
	if err != nil || fresh || again.Before != before || again.After != after {
		t.Fatalf("second intent must return the first: %+v fresh=%v err=%v", again, fresh, err)
	}
	f.reopen()
	got, err := f.EditSettled(k, payment.EditEdited, payment.StatusInProcess, "")
	if err != nil || got.Outcome != payment.EditEdited || !got.Settled.Equal(Epoch.Add(time.Minute)) {
		t.Fatalf("settled: %+v err=%v", got, err)
	}
	if got, err = f.EditSettled(k, payment.EditTooLate, payment.StatusPrinted, "late"); err != nil || got.Outcome != payment.EditEdited {
		t.Fatalf("a settled line must keep its first outcome: %+v err=%v", got, err)
	}
	if lines, err := f.Edits("ed12"); err != nil || len(lines) != 1 || lines[0].After.Amount != 1250 {
		t.Fatalf("edits of ed12: %+v err=%v", lines, err)
	}
	if lines, err := f.Cancels("ed12"); err != nil || len(lines) != 0 {
		t.Fatalf("an edit line is no cancel line: %+v err=%v", lines, err)
	}
	f.invariants()
}

func testEditRefuses(t *testing.T, be Backend) {
	f := open(t, be)
	row := payment.RowKey{Batch: 1, Line: 2}
	for _, e := range []payment.Edit{
		{Key: payment.EditKey{Line: 1}, CheckID: "chk", Row: row},
		{Key: payment.EditKey{File: "ab", Line: 1}, Row: row},
		{Key: payment.EditKey{File: "ab", Line: 1}, CheckID: "chk"},
	} {
		if _, _, err := f.EditIntent(e); err == nil {
			t.Errorf("intent %+v recorded", e)
		}
	}
	if _, err := f.EditSettled(payment.EditKey{File: "ab", Line: 1}, payment.EditEdited, "", ""); !errors.Is(err, payment.ErrNotFound) {
		t.Errorf("settling a line without an intent: %v", err)
	}
	if _, err := f.EditSettled(payment.EditKey{File: "ab", Line: 1}, payment.EditSent, "", ""); err == nil {
		t.Error("settled with the intent's own outcome")
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
