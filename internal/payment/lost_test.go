package payment

import "testing"

func TestBatchLabelRoundTrip(t *testing.T) {
	l := BatchLabel("3799fb", 42)
	if l != "batchd-3799fb-42" {
		t.Fatalf("label %q", l)
	}
	for _, s := range []string{l, " BATCHD-3799FB-42 ", "Batchd-3799fb-42"} {
		if inst, id, ok := ParseBatchLabel(s); !ok || inst != "3799fb" || id != 42 {
			t.Errorf("ParseBatchLabel(%q) = %q %d %v", s, inst, id, ok)
		}
	}
	for _, s := range []string{"", "Payroll-Nov", "batchd-3799fb", "batchd--42", "batchd-3799fb-", "batchd-3799fb-042",
		"batchd-3799fb-0", "batchd-zz99fb-42", "batchd-3799fb-42-x", "batchd-3799fb-4x", "xbatchd-3799fb-42", "batchd-3799fb-99999999999999999999999"} {
		if inst, id, ok := ParseBatchLabel(s); ok {
			t.Errorf("ParseBatchLabel(%q) = %q %d, want no batch label", s, inst, id)
		}
	}
}
