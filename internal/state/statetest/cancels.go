package statetest

import (
	"errors"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// Cancels: a cancel line's intent is recorded once, before its void
// leaves; its first final outcome stands; both survive a restart.
var cancelCases = []testCase{
	{"IntentOnceThenSettled", testCancelIntent},
	{"RefusesBadLines", testCancelRefuses},
}

func testCancelIntent(t *testing.T, be Backend) {
	f := open(t, be)
	k := payment.LineKey{File: "ab12", Line: 3}
	rec, fresh, err := f.CancelIntent(payment.Cancel{Key: k, CheckID: "chk-1", Reason: "paid twice", Row: payment.RowKey{Batch: 1, Line: 2}})
	if err != nil || !fresh || rec.Outcome != payment.CancelSent || !rec.Sent.Equal(Epoch) {
		t.Fatalf("first intent: %+v fresh=%v err=%v", rec, fresh, err)
	}
	f.clock.Add(time.Minute)
	again, fresh, err := f.CancelIntent(payment.Cancel{Key: k, CheckID: "chk-other", Reason: "changed"})
	if err != nil || fresh || again.CheckID != "chk-1" || !again.Sent.Equal(Epoch) {
		t.Fatalf("second intent must return the first: %+v fresh=%v err=%v", again, fresh, err)
	}
	f.reopen()
	got, err := f.CancelSettled(k, payment.CancelVoided, payment.StatusVoid, "")
	if err != nil || got.Outcome != payment.CancelVoided || got.Status != payment.StatusVoid || !got.Settled.Equal(Epoch.Add(time.Minute)) {
		t.Fatalf("settled: %+v err=%v", got, err)
	}
	got, err = f.CancelSettled(k, payment.CancelTooLate, payment.StatusPrinted, "late")
	if err != nil || got.Outcome != payment.CancelVoided {
		t.Fatalf("a settled line must keep its first outcome: %+v err=%v", got, err)
	}
	if _, _, err := f.CancelIntent(payment.Cancel{Key: payment.LineKey{File: "ab12", Line: 10}, CheckID: "chk-2"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.CancelIntent(payment.Cancel{Key: payment.LineKey{File: "ab13", Line: 1}, CheckID: "chk-3"}); err != nil {
		t.Fatal(err)
	}
	lines, err := f.Cancels("ab12")
	if err != nil || len(lines) != 2 || lines[0].Key.Line != 3 || lines[1].Key.Line != 10 || lines[1].Outcome != payment.CancelSent {
		t.Fatalf("cancels of ab12 in line order: %+v err=%v", lines, err)
	}
	f.invariants()
}

func testCancelRefuses(t *testing.T, be Backend) {
	f := open(t, be)
	for _, c := range []payment.Cancel{
		{Key: payment.LineKey{Line: 1}, CheckID: "chk"},
		{Key: payment.LineKey{File: "ab", Line: 0}, CheckID: "chk"},
		{Key: payment.LineKey{File: "ab", Line: 1}},
	} {
		if _, _, err := f.CancelIntent(c); err == nil {
			t.Errorf("intent %+v recorded", c)
		}
	}
	if _, err := f.CancelSettled(payment.LineKey{File: "ab", Line: 1}, payment.CancelVoided, payment.StatusVoid, ""); !errors.Is(err, payment.ErrNotFound) {
		t.Errorf("settling a line without an intent: %v", err)
	}
	if _, _, err := f.CancelIntent(payment.Cancel{Key: payment.LineKey{File: "ab", Line: 1}, CheckID: "chk"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CancelSettled(payment.LineKey{File: "ab", Line: 1}, payment.CancelSent, "", ""); err == nil {
		t.Error("settled with the intent's own outcome")
	}
	f.invariants()
}
