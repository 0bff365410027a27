package jobs

import (
	"errors"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// TestRelease: the one release rule refuses, with ErrNotReleasable and
// the fix, an incomplete request, a missing row, a row not held and a
// name two batches bear; it releases the row --batch names.
func TestRelease(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		db := ledgertest.Open(t, backend, state.Options{})
		for i, sha := range []string{"one", "two"} { // two files named pay.csv: line 2 held in each
			l, err := db.BeginBatch(payment.FileMeta{Name: "pay.csv", SHA256: sha})
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range []int{2, 3} {
				p := payment.Payment{Amount: money.Cents(100 + i), Memo: "m", Name: "Ada", Email: "ada@example.com",
					BankRouting: "999900001", BankAccount: "0009995678"}
				m := payment.PayeeMark{Payee: "ada", Account: payment.PayeeAccount{KeyID: "k", Hash: "h", Last4: "5678", Length: 10}}
				if line == 2 {
					m.Change = &payment.AccountChange{From: "4567", To: "5678", Action: "hold"}
				}
				if err := l.AddMarked(line, p, m); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := l.Commit(2, 0); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct {
			req  ReleaseRequest
			want string
		}{
			{ReleaseRequest{File: "pay.csv", Line: 2}, "who approves it"},
			{ReleaseRequest{File: "pay.csv", By: "al"}, "a line of 1 or more"},
			{ReleaseRequest{File: "other.csv", Line: 2, By: "al"}, "no row at other.csv line 2"},
			{ReleaseRequest{File: "pay.csv", Line: 3, By: "al"}, "pay.csv line 3 (batch 1 line 3) is pending, not held"},
			{ReleaseRequest{File: "pay.csv", Line: 2, By: "al"}, "2 batches of pay.csv hold a row at line 2 (batch 1 line 2 and batch 2 line 2): say which with --batch N"},
		} {
			_, err := Release(db, c.req)
			if !errors.Is(err, ErrNotReleasable) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Release(%+v) = %v, want ErrNotReleasable saying %q", c.req, err, c.want)
			}
		}
		msg, err := Release(db, ReleaseRequest{File: "pay.csv", Line: 2, Batch: 2, By: "al"})
		if err != nil || msg != "released pay.csv line 2 (batch 2 line 2, Ada): now pending, sent by the next submit run" {
			t.Fatalf("Release = %q, %v", msg, err)
		}
		if r, err := db.Row(payment.RowKey{Batch: 1, Line: 2}); err != nil || r.State != payment.Held {
			t.Fatalf("the other batch's row: %+v %v", r, err)
		}
	})
}
