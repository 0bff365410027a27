package ingest

import (
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
)

// TestFileOfALostBatchIsRefused: pay.csv was ingested and paid by the
// ledger as it was before its database went back in time; the ledger
// after the rewind (here: a ledger that never saw the file, on the same
// server) knows nothing of it, but reconcile recorded the checks of the
// lost batch. The same file dropped again is refused, naming those checks
// and the archived copy, and again when dropped unchanged; a new file
// whose amounts merely equal theirs is accepted; a file that carries a
// lost check's number and amount is refused until its number changes.
func TestFileOfALostBatchIsRefused(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		srv := servers()["inprocess"](t)
		before := newRigOn(t, backend, srv, nil)
		before.drop("pay.csv", twoRows)
		if out, err := before.run(before.rem); err != nil || len(out) != 1 || out[0].Outcome != Accepted {
			t.Fatalf("first pickup: %+v %v", out, err)
		}
		var lost []payment.LostCheck
		err := before.db.Rows(before.batches()[0].ID, func(r *payment.Row) (bool, error) {
			lost = append(lost, payment.LostCheck{ID: "chk-" + r.Number, Label: r.Label, Number: r.Number, Amount: r.Payment.Amount,
				Created: before.clk.now(), Instance: before.db.Instance(), Batch: r.Key.Batch, Recorded: before.clk.now()})
			return true, nil
		})
		if err != nil || len(lost) != 2 {
			t.Fatalf("rows of the first batch: %v %v", lost, err)
		}

		after := newRigOn(t, backend, srv, nil)
		if err := after.db.RecordLost(lost); err != nil {
			t.Fatal(err)
		}
		for round := 1; round <= 2; round++ {
			after.drop("pay.csv", twoRows)
			out, err := after.run(after.rem)
			if err != nil || len(out) != 1 || out[0].Outcome != LostBatch {
				t.Fatalf("round %d: the lost batch's file dropped again: %+v %v", round, out, err)
			}
			if after.pendingRows() != 0 {
				t.Fatalf("round %d: %d rows of the lost batch's file are pending", round, after.pendingRows())
			}
			note := after.read("failed/" + strings.TrimPrefix(out[0].MovedTo, after.opts.Failed+"/") + ".error.txt")
			mustContain(t, note, "archive/2026-11-20/pay.csv", "archived on 2026-11-20",
				"line 2: check "+lost[0].ID+", number "+lost[0].Number+", amount 12.34",
				"line 3: check "+lost[1].ID+", number "+lost[1].Number+", amount 0.01",
				"batchd reconcile", "check number no existing check carries")
			if strings.Contains(note, "1111000016") {
				t.Fatal("the refusal shows a full account number")
			}
		}

		// The same amounts in a new file, without numbers of its own: an
		// honest file, accepted.
		after.drop("next.csv", strings.ReplaceAll(twoRows, "rent", "rent for december"))
		if out, err := after.run(after.rem); err != nil || len(out) != 1 || out[0].Outcome != Accepted {
			t.Fatalf("a new file with the same amounts: %+v %v", out, err)
		}

		// A row with a lost check's own number and amount was paid.
		numbered := func(n string) string {
			return "number,amount,memo,name,email,bank_routing,bank_account\n" +
				n + ",0.01,fee,Bob,bob@example.com,999900001,1111000008\n"
		}
		after.drop("again.csv", numbered("000"+lost[1].Number))
		out, err := after.run(after.rem)
		if err != nil || len(out) != 1 || out[0].Outcome != LostBatch {
			t.Fatalf("a row carrying a lost check's number and amount: %+v %v", out, err)
		}
		mustContain(t, out[0].Detail, "carry the check number and amount", "line 2: check "+lost[1].ID)
		after.drop("again.csv", numbered("990001"))
		if out, err := after.run(after.rem); err != nil || len(out) != 1 || out[0].Outcome != Accepted {
			t.Fatalf("the same row with a new number: %+v %v", out, err)
		}
	})
}
