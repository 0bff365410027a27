package ingest

import (
	"strings"
	"testing"
)

// TestXLSXFiles: ingest picks up XLSX workbooks by default beside CSV
// files; one whose identifiers are Text is loaded, one with a number
// account cell is refused whole naming the cell, and a workbook named
// .csv is refused with the fix. Spreadsheet lock files are left alone.
func TestXLSXFiles(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, func(o *Options) { o.Pattern = ""; o.OnInvalid = SkipRows })
		r.dropFile("text.xlsx", "../../testdata/spreadsheet/text-columns.xlsx")
		r.dropFile("numbers.xlsx", "../../testdata/spreadsheet/numeric-account.xlsx")
		r.dropFile("misnamed.csv", "../../testdata/spreadsheet/text-columns.xlsx")
		r.drop("~$text.xlsx", "owner file of an open workbook")
		out, err := r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]Outcome{}
		for _, o := range out {
			got[o.File] = o
		}
		if o := got["text.xlsx"]; o.Outcome != "accepted" || o.Valid != 3 {
			t.Errorf("text.xlsx: %+v", o)
		}
		if o := got["numbers.xlsx"]; o.Outcome == "accepted" || o.Valid != 0 && o.Outcome == "accepted-with-rejects" {
			t.Errorf("numbers.xlsx: %+v", o)
		}
		if _, ok := got["~$text.xlsx"]; ok || len(out) != 3 {
			t.Errorf("outcomes %+v", out)
		}
		if r.pendingRows() != 3 {
			t.Errorf("%d rows pending, want the 3 of text.xlsx", r.pendingRows())
		}
		mustContain(t, r.read("failed/numbers.xlsx.error.txt"), "cell C2, column bank_account: is a number cell",
			"Format the column as Text")
		mustContain(t, r.read("failed/misnamed.csv.error.txt"), "rename it to .xlsx")
		if e := r.read("failed/numbers.xlsx.error.txt"); strings.Contains(e, "987654321") {
			t.Errorf("error file shows an account: %s", e)
		}
	})
}
