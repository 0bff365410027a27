package ingest

import (
	"encoding/csv"
	"strings"
	"testing"
)

// Issue 18: the files LibreOffice 7.4 wrote (testdata/spreadsheet, see
// make.sh), as ingest settles them.

// TestRoundTripHeldWhole: the payment CSV LibreOffice re-saved, whose
// accounts lost their zeros, goes to failed/ whole, even under skip_rows,
// with the reason in its error.txt and no account shown; the system's own
// export of the same payments is accepted.
func TestRoundTripHeldWhole(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, func(o *Options) { o.OnInvalid = SkipRows })
		r.dropFile("resaved.csv", "../../testdata/spreadsheet/resaved.csv")
		out, err := r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 1 || out[0].Outcome == "accepted" || out[0].Outcome == "accepted-with-rejects" {
			t.Fatalf("outcomes %+v", out)
		}
		if r.pendingRows() != 0 || len(r.files("archive")) != 0 {
			t.Fatal("rows of a file re-saved by a spreadsheet were loaded")
		}
		reason := r.read("failed/resaved.csv.error.txt")
		mustContain(t, reason, "line 2, column amount: this file looks saved by a spreadsheet: amount 1086.3 has one decimal",
			"the bank_account column holds numbers of 7 to 10 digits", "every row of this file is refused",
			"Re-export the file from the system that made it")
		for _, account := range []string{"1234567", "987654321", "4400123456"} {
			if strings.Contains(reason, account) {
				t.Errorf("error.txt shows account %s:\n%s", account, reason)
			}
		}

		r.dropFile("source.csv", "../../testdata/spreadsheet/source.csv")
		out, err = r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 1 || out[0].Outcome != "accepted" || out[0].Valid != 3 {
			t.Fatalf("the system's export: outcomes %+v", out)
		}
	})
}

// TestRejectsListEachFindingOnce: the rejects report of a file with many
// kinds of invalid row has one row per finding: no line, column and
// message twice.
func TestRejectsListEachFindingOnce(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, func(o *Options) { o.OnInvalid = SkipRows; o.TestMode = false })
		r.drop("pay.csv", "amount,memo,name,email,bank_routing,bank_account\n"+
			"10.00,Invoice 1,Ann Smith,ann@example.com,121000358,1234567\n"+
			"-5,Invoice 2,Bob Jones,bob,12100035,987654321\n"+
			"10.00,Invoice 1,Ann Smith,ann@example.com,121000358,1234567\n"+
			"20.00,https://x.example/p?x=1,Jos? Garc?a,j@example.com,121000358,4400123456\n")
		if _, err := r.run(r.rem); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(r.read("outbox/pay.csv.rejects.csv"), "\ufeff"))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, row := range rows[1:] {
			key := row[0] + "|" + row[1] + "|" + row[3]
			if seen[key] {
				t.Errorf("finding listed twice: %v", row)
			}
			seen[key] = true
		}
		if len(rows) < 5 {
			t.Errorf("rejects report %v", rows)
		}
		for _, row := range rows[1:] {
			if row[0] == "5" && row[1] == "memo" {
				t.Errorf("a web address's query taken for a lost letter: %v", row)
			}
		}
	})
}
