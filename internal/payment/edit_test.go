package payment

import "testing"

// An edit line's values go over the check's; the row takes them and its
// identity moves with them; a check shows values as the service may echo
// them.
func TestEditFields(t *testing.T) {
	r := &Row{Label: "batchd-x-1", Number: "42", Payment: Payment{Amount: 1000, Memo: "inv", Name: "Ann", Email: "a@b.c"}}
	before := EditFieldsOf(r)
	after := EditChange{Amount: 1250, Memo: "inv 2"}.Over(before)
	if after != (EditFields{Amount: 1250, Number: "42", Label: "batchd-x-1", Memo: "inv 2", Name: "Ann", Email: "a@b.c"}) {
		t.Fatalf("over: %+v", after)
	}
	if got := before.Changes(after); got != `amount 10.00 → 12.50; memo "inv" → "inv 2"` {
		t.Errorf("changes: %q", got)
	}
	after.ApplyTo(r)
	if EditFieldsOf(r) != after || r.Payment.Label != "" || r.Payment.Number != "" {
		t.Errorf("applied: %+v (a label and number the edit keeps stay the row's own)", r)
	}
	after.Number = "0043"
	after.ApplyTo(r)
	if r.Number != "0043" || r.Payment.Number != "0043" {
		t.Errorf("a new number: %+v", r)
	}
	ck := &Check{Label: " BATCHD-X-1 ", Number: "43", Amount: 1250, Memo: "inv 2"}
	if !after.ShownBy(ck) || before.ShownBy(ck) {
		t.Errorf("shown by %+v: after %v before %v", ck, after.ShownBy(ck), before.ShownBy(ck))
	}
}
