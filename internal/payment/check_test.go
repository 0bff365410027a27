package payment

import (
	"testing"

	"github.com/batchd/batchd/internal/money"
)

// wire reads an amount as the service may echo it, float artefacts and all.
func wire(t *testing.T, s string) money.Cents {
	t.Helper()
	c, err := money.ParseWire(s)
	if err != nil {
		t.Fatalf("ParseWire(%q): %v", s, err)
	}
	return c
}

func TestBelongsIsTheOneIdentityRule(t *testing.T) {
	row := &Row{Key: RowKey{Batch: 3, Line: 7}, Label: "Payroll-Nov", Number: "0000123",
		Payment: Payment{Amount: 29}}
	other := RowKey{Batch: 3, Line: 8}
	cases := []struct {
		name   string
		check  Check
		owner  Owner
		belong bool
	}{
		{"exact echo", Check{ID: "c", Label: "Payroll-Nov", Number: "0000123", Amount: 29}, Owner{}, true},
		{"leading zeros dropped", Check{ID: "c", Label: "Payroll-Nov", Number: "123", Amount: 29}, Owner{}, true},
		{"more leading zeros", Check{ID: "c", Label: "Payroll-Nov", Number: "00000000123", Amount: 29}, Owner{}, true},
		{"label case", Check{ID: "c", Label: "PAYROLL-nov", Number: "123", Amount: 29}, Owner{}, true},
		{"label spaces", Check{ID: "c", Label: "  Payroll-Nov ", Number: "123", Amount: 29}, Owner{}, true},
		{"amount from float text", Check{ID: "c", Label: "Payroll-Nov", Number: "123", Amount: wire(t, "0.29000000000000004")}, Owner{}, true},
		{"amount from float text below", Check{ID: "c", Label: "Payroll-Nov", Number: "123", Amount: wire(t, "0.28999999999999998")}, Owner{}, true},
		{"owned by this row", Check{ID: "c", Label: "Payroll-Nov", Number: "123", Amount: 29}, Owner{Key: row.Key, Owned: true}, true},
		{"owned by another row", Check{ID: "c", Label: "Payroll-Nov", Number: "123", Amount: 29}, Owner{Key: other, Owned: true}, false},
		{"another number", Check{ID: "c", Label: "Payroll-Nov", Number: "1230", Amount: 29}, Owner{}, false},
		{"number is not a prefix match", Check{ID: "c", Label: "Payroll-Nov", Number: "12", Amount: 29}, Owner{}, false},
		{"another amount", Check{ID: "c", Label: "Payroll-Nov", Number: "123", Amount: wire(t, "0.30")}, Owner{}, false},
		{"a label that only contains ours", Check{ID: "c", Label: "Payroll-Nov-2", Number: "123", Amount: 29}, Owner{}, false},
		{"inner spaces count", Check{ID: "c", Label: "Payroll - Nov", Number: "123", Amount: 29}, Owner{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Belongs(row, &tc.check, tc.owner); got != tc.belong {
				t.Fatalf("Belongs = %v, want %v", got, tc.belong)
			}
			// Key must agree with Same, or reconcile's index would miss a match.
			same := row.Identity().Same(tc.check.Identity())
			if same && row.Identity().Key() != tc.check.Identity().Key() {
				t.Fatalf("Same but keys differ: %q vs %q", row.Identity().Key(), tc.check.Identity().Key())
			}
			if diffs := row.Identity().Differences(tc.check.Identity()); same != (len(diffs) == 0) {
				t.Fatalf("Same=%v but Differences=%v", same, diffs)
			}
		})
	}
}

func TestSameNumberEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"0", "000", true},
		{"0", "", false},
		{" 42 ", "0042", true},
		{"A42", "a42", false}, // not a number: compared as text
		{"12", "12 ", true},
	} {
		if got := SameNumber(tc.a, tc.b); got != tc.same {
			t.Errorf("SameNumber(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

func TestStatus(t *testing.T) {
	for _, s := range []string{"deposited", "failed", "void", "deleted"} {
		if !ParseStatus(s).Final() {
			t.Errorf("%s should be final", s)
		}
	}
	for _, s := range []string{"in_process", "in_review", "printed", "", "something_new"} {
		if ParseStatus(s).Final() {
			t.Errorf("%q should not be final", s)
		}
	}
	if got := ParseStatus(" In Process "); got != StatusInProcess || !got.Known() {
		t.Errorf("ParseStatus(In Process) = %q", got)
	}
	if got := ParseStatus("Paused"); got.Known() || got != "paused" {
		t.Errorf("unknown word kept as %q, known %v", got, got.Known())
	}
	if Status("").String() != "unknown" {
		t.Errorf("empty status prints %q", Status("").String())
	}
}

func TestTransitions(t *testing.T) {
	if to, err := Create.Next(InDoubt); err != nil || to != Submitted {
		t.Fatalf("create from in doubt: %v %v", to, err)
	}
	if _, err := Release.Next(Submitted); err == nil {
		t.Fatal("release of a submitted row must be refused")
	}
	if _, err := Transition("bogus").Next(Pending); err == nil {
		t.Fatal("unknown transition accepted")
	}
}
