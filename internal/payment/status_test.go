package payment

import "testing"

func TestAdvancesOnlyForward(t *testing.T) {
	finals := []Status{StatusDeposited, StatusFailed, StatusVoid, StatusDeleted}
	cases := []struct {
		name     string
		from, to Status
		want     bool
	}{
		{"nothing recorded yet", "", StatusInProcess, true},
		{"in process to in review", StatusInProcess, StatusInReview, true},
		{"in process to printed", StatusInProcess, StatusPrinted, true},
		{"in review to printed", StatusInReview, StatusPrinted, true},
		{"printed to deposited", StatusPrinted, StatusDeposited, true},
		{"in process straight to failed", StatusInProcess, StatusFailed, true},
		{"in review to void", StatusInReview, StatusVoid, true},
		{"printed to deleted", StatusPrinted, StatusDeleted, true},
		{"an unknown word recorded, a known status heard", "processed", StatusPrinted, true},
		{"the unknown category recorded", StatusUnknown, StatusInProcess, true},

		{"same status", StatusPrinted, StatusPrinted, false},
		{"same status, nothing recorded", "", "", false},
		{"printed back to in process", StatusPrinted, StatusInProcess, false},
		{"printed back to in review", StatusPrinted, StatusInReview, false},
		{"in review back to in process", StatusInReview, StatusInProcess, false},
		{"to the empty status", StatusInProcess, "", false},
		{"to an unknown word", StatusInProcess, "processed", false},
		{"to the unknown category", StatusInProcess, StatusUnknown, false},
		{"from one unknown word to another", "processed", "settled", false},
	}
	for _, f := range finals {
		for _, to := range []Status{StatusInProcess, StatusInReview, StatusPrinted, StatusDeposited, StatusFailed, StatusVoid, StatusDeleted, "", "processed"} {
			cases = append(cases, struct {
				name     string
				from, to Status
				want     bool
			}{"from final " + string(f) + " to " + to.String(), f, to, false})
		}
	}
	for _, c := range cases {
		if got := c.to.Advances(c.from); got != c.want {
			t.Errorf("%s: %q.Advances(%q) = %v, want %v", c.name, c.to, c.from, got, c.want)
		}
	}
}

// TestAdvancesCoversEveryKnownStatus: a status added to the known set but
// not ranked would never advance, and events would be ignored silently.
func TestAdvancesCoversEveryKnownStatus(t *testing.T) {
	for s := range known {
		if !s.Advances("") {
			t.Errorf("%s does not advance from no status: give it a rank", s)
		}
	}
}
