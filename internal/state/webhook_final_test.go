package state

import (
	"context"
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

// RecordEvent names the final status an event moved its check's row to,
// once: not for a status that is not final, not for a redelivery, not for
// an event that arrives after the row already ended, not for a check no
// row owns.
func TestRecordEventNamesTheFinalStatusOnce(t *testing.T) {
	d, _ := hookLedger(t, t.TempDir())
	submitted(t, d, "a.csv", "chk-a", payment.StatusInProcess)
	for _, c := range []struct {
		name  string
		check string
		to    payment.Status
		id    string // "" for the event's own id
		want  payment.Status
		dup   bool
	}{
		{"not final", "chk-a", payment.StatusPrinted, "", "", false},
		{"returned", "chk-a", payment.StatusFailed, "", payment.StatusFailed, false},
		{"the same event again", "chk-a", payment.StatusFailed, "", "", true},
		{"another event after the end", "chk-a", payment.StatusFailed, "ev-late", "", false},
		{"a check no row owns", "chk-x", payment.StatusVoid, "", "", false},
	} {
		e := checkEvent(c.check, c.to)
		if c.id != "" {
			e.ID = c.id
		}
		dup, final, err := d.RecordEvent(context.Background(), e)
		if err != nil || dup != c.dup || final != c.want {
			t.Errorf("%s: duplicate %v, final %q, %v; want %v, %q", c.name, dup, final, err, c.dup, c.want)
		}
	}
}
