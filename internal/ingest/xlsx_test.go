package ingest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
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
		r.drop("rows.xlsx", workbook(t, [][]any{
			{"amount", "memo", "name", "email", "bank_routing", "bank_account"},
			{"10.00", "Rent", "Ann", "ann@example.com", "999900001", "0001234567"},
			{"-5", "Rent", "Bob", "bob@example.com", "999900001", "0001234568"},
		}))
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
		if o := got["rows.xlsx"]; o.Outcome != "accepted-with-rejects" || o.Valid != 1 || o.Rejected != 1 {
			t.Errorf("rows.xlsx: %+v", o)
		}
		if _, ok := got["~$text.xlsx"]; ok || len(out) != 4 {
			t.Errorf("outcomes %+v", out)
		}
		if r.pendingRows() != 4 {
			t.Errorf("%d rows pending, want the 3 of text.xlsx and 1 of rows.xlsx", r.pendingRows())
		}
		// The rejects report names the cell; its line is the sheet's row.
		mustContain(t, r.read("outbox/rows.xlsx.rejects.csv"), `"line","column","value","message","severity","cell"`,
			`"3","amount","-5","must be greater than 0","error","A3"`)
		mustContain(t, r.read("failed/numbers.xlsx.error.txt"), "cell C2, column bank_account: is a number cell",
			"Format the column as Text")
		mustContain(t, r.read("failed/misnamed.csv.error.txt"), "rename it to .xlsx")
		if e := r.read("failed/numbers.xlsx.error.txt"); strings.Contains(e, "987654321") {
			t.Errorf("error file shows an account: %s", e)
		}
	})
}

// workbook is an XLSX file of one sheet holding rows, every cell text.
func workbook(t *testing.T, rows [][]any) string {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	for i, row := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Sheet1", cell, &row); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
