package suggest

import "testing"

func TestClosest(t *testing.T) {
	fields := []string{"amount", "memo", "name", "bank_account"}
	cases := map[string]string{"ammount": "amount", "nmae": "name", "bank_acount": "bank_account", "zzzzzz": "", "": ""}
	for in, want := range cases {
		if got := Closest(in, fields, 2); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
	if d := Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance = %d", d)
	}
}
