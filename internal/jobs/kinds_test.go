package jobs

import (
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

// Every applied kind of the registry (payment.Kinds) has its rule
// registered, and nothing else is: a kind added to the one list without
// its registration fails here, not on a finance team's file.
func TestEveryAppliedKindIsRegistered(t *testing.T) {
	reg := kindsOf(nil)
	n := 0
	for _, k := range payment.Kinds() {
		_, ok := reg.lines[k.Kind]
		if ok != k.Applied {
			t.Errorf("%s: applied %v, registered %v", k.Kind, k.Applied, ok)
		}
		if k.Applied {
			n++
			if len(k.Header.Columns) == 0 {
				t.Errorf("%s: applied, with no columns to read its lines by", k.Kind)
			}
		}
	}
	if len(reg.lines) != n {
		t.Errorf("%d kinds registered, %d applied kinds in payment.Kinds", len(reg.lines), n)
	}
}
