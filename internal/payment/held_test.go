package payment

import "testing"

// A held row is sent only after Approve; a restore suspects it like any
// row without a check.
func TestHeldTransitions(t *testing.T) {
	for _, tr := range []Transition{Send, Create, Doubt, Reject, Release, Observe, Rehold} {
		if _, err := tr.Next(Held); err == nil {
			t.Errorf("%s from held must be refused", tr)
		}
	}
	if to, err := Approve.Next(Held); err != nil || to != Pending {
		t.Fatalf("approve: %s %v", to, err)
	}
	if to, err := Suspect.Next(Held); err != nil || to != InDoubt {
		t.Fatalf("suspect: %s %v", to, err)
	}
	for _, from := range []RowState{Pending, InFlight, InDoubt, Submitted, Rejected} {
		if _, err := Approve.Next(from); err == nil {
			t.Errorf("approve from %s must be refused", from)
		}
	}
	if to, err := Rehold.Next(InDoubt); err != nil || to != Held {
		t.Fatalf("rehold: %s %v", to, err)
	}
	if !Held.Open() {
		t.Fatal("a held row has no check: it is open")
	}
}
