package statetest

import (
	"errors"
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

// Cancel lines (payment.CancelLines, on the line store): a line's intent
// is recorded once, before its void leaves; its first final outcome
// stands; both survive a restart; a line that names no check, or no
// line, is refused.
var cancelCases = []testCase{
	{"IntentOnceThenSettled", testCancelIntent},
	{"RefusesBadLines", testCancelRefuses},
}

func cancelLine(file string, line int, checkID string) payment.Cancel {
	return payment.Cancel{CheckLine: payment.CheckLine[payment.CancelOutcome]{
		Key: payment.LineKey{File: file, Line: line}, CheckID: checkID, Outcome: payment.CancelSent, Sent: Epoch}}
}

func testCancelIntent(t *testing.T, be Backend) {
	f := open(t, be)
	first := cancelLine("ab12", 3, "chk-1")
	first.Row, first.Reason = payment.RowKey{Batch: 1, Line: 2}, "paid twice"
	rec, fresh, err := payment.CancelLines.Intent(f, first, Epoch)
	if err != nil || !fresh || rec.Outcome != payment.CancelSent || rec.Reason != "paid twice" {
		t.Fatalf("first intent: %+v fresh=%v err=%v", rec, fresh, err)
	}
	again, fresh, err := payment.CancelLines.Intent(f, cancelLine("ab12", 3, "chk-other"), Epoch)
	if err != nil || fresh || again.CheckID != "chk-1" || again.Row != first.Row {
		t.Fatalf("second intent must return the first: %+v fresh=%v err=%v", again, fresh, err)
	}
	f.reopen()
	settle := func(o payment.CancelOutcome, st payment.Status) (payment.Cancel, error) {
		return payment.CancelLines.Settle(f, first.Key, o, st, "", Epoch)
	}
	if got, err := settle(payment.CancelVoided, payment.StatusVoid); err != nil || got.Outcome != payment.CancelVoided || got.Status != payment.StatusVoid {
		t.Fatalf("settled: %+v err=%v", got, err)
	}
	if got, err := settle(payment.CancelTooLate, payment.StatusPrinted); err != nil || got.Outcome != payment.CancelVoided {
		t.Fatalf("a settled line must keep its first outcome: %+v err=%v", got, err)
	}
	for _, c := range []payment.Cancel{cancelLine("ab12", 10, "chk-2"), cancelLine("ab13", 1, "chk-3")} {
		if _, _, err := payment.CancelLines.Intent(f, c, Epoch); err != nil {
			t.Fatal(err)
		}
	}
	lines, err := payment.CancelLines.List(f, "ab12")
	if err != nil || len(lines) != 2 || lines[0].Key.Line != 3 || lines[1].Key.Line != 10 || lines[1].Outcome != payment.CancelSent {
		t.Fatalf("cancels of ab12 in line order: %+v err=%v", lines, err)
	}
	f.invariants()
}

func testCancelRefuses(t *testing.T, be Backend) {
	f := open(t, be)
	both := cancelLine("ab", 1, "chk")
	both.Token = "0c5e0000-0000-0000-0000-000000000000"
	for _, c := range []payment.Cancel{cancelLine("", 1, "chk"), cancelLine("ab", 0, "chk"), cancelLine("ab", 1, ""), both} {
		if _, _, err := payment.CancelLines.Intent(f, c, Epoch); err == nil {
			t.Errorf("intent %+v recorded", c)
		}
	}
	if _, err := payment.CancelLines.Settle(f, payment.LineKey{File: "ab", Line: 1}, payment.CancelVoided, "", "", Epoch); !errors.Is(err, payment.ErrNotFound) {
		t.Errorf("settling a line without an intent: %v", err)
	}
	if _, _, err := payment.CancelLines.Intent(f, cancelLine("ab", 1, "chk"), Epoch); err != nil {
		t.Fatal(err)
	}
	if _, err := payment.CancelLines.Settle(f, payment.LineKey{File: "ab", Line: 1}, payment.CancelSent, "", "", Epoch); err == nil {
		t.Error("settled with the intent's own outcome")
	}
	f.invariants()
}
