package ingest

import (
	"testing"
)

// The spreadsheet checks of csvfile, as ingest applies them.

// TestLostLeadingZerosRefuseTheWholeFile: a file whose routing numbers or
// ZIP codes lost their leading zeros is refused whole, even under
// skip_rows, because its account numbers cannot be trusted: no row of it is
// loaded, although two of its rows have no problem of their own.
func TestLostLeadingZerosRefuseTheWholeFile(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, func(o *Options) { o.OnInvalid = SkipRows; o.TestMode = false })
		r.dropFile("pay.csv", "../../testdata/csv/lost_zeros.csv")
		out, err := r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 1 || out[0].Outcome == "accepted" || out[0].Outcome == "accepted-with-rejects" {
			t.Fatalf("outcomes %+v", out)
		}
		if r.pendingRows() != 0 || len(r.files("archive")) != 0 {
			t.Fatal("rows of a file damaged by a spreadsheet were loaded")
		}
		mustContain(t, r.read("failed/pay.csv.error.txt"), "a spreadsheet dropped its leading zero",
			"every row of this file is refused", "format the bank_routing, bank_account and zip columns as text")
	})
}

// TestDelimiterAndSeverityInRejects: ingest.delimiter reaches the parser,
// and the rejects report has a severity column after the first four.
func TestDelimiterAndSeverityInRejects(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, func(o *Options) { o.OnInvalid = SkipRows; o.Delimiter = ";" })
		r.dropFile("pay.csv", "../../testdata/csv/semicolons.csv")
		out, err := r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 1 || out[0].Outcome != "accepted-with-rejects" || out[0].Valid != 2 || out[0].Rejected != 2 {
			t.Fatalf("outcomes %+v", out)
		}
		mustContain(t, r.read("outbox/pay.csv.rejects.csv"), `"line","column","value","message","severity"`,
			`"3","amount","1234,56","amounts must use a dot for decimals`, `"error"`)
	})
}

// TestWarningsInRejects: a name whose letters an export turned into "?" is
// a warning row of the rejects report; the row itself is valid.
func TestWarningsInRejects(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, func(o *Options) { o.OnInvalid = SkipRows })
		r.drop("pay.csv", "amount,memo,name,email,bank_routing,bank_account\r\n"+
			"10.00,Invoice 1,?ukasz Nowak,l@example.com,999900001,1111000016\r\n"+
			"-5,Invoice 2,Ann Smith,ann@example.com,999900001,1111000008\r\n")
		out, err := r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 1 || out[0].Outcome != "accepted-with-rejects" || out[0].Valid != 1 || out[0].Rejected != 1 {
			t.Fatalf("outcomes %+v", out)
		}
		mustContain(t, r.read("outbox/pay.csv.rejects.csv"),
			`"2","name","?ukasz Nowak","has a ""?"" where a letter should be`, `"CSV UTF-8"" so that names keep their letters","warning"`,
			`"3","amount","-5","must be greater than 0","error"`)
	})
}
