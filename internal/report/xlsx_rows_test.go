package report_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/xuri/excelize/v2"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/report/reporttest"
)

// TestXLSXRowsCompressedAsAdded: the worksheet's rows are compressed into
// a temporary file while the report is filled, not when it is committed;
// the workbook committed is the one a reader sees, and nothing is left
// behind.
func TestXLSXRowsCompressedAsAdded(t *testing.T) {
	dir := t.TempDir()
	r, err := sample.Create(filepath.Join(dir, "s.csv"), []report.Format{report.CSV, report.XLSX})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	for i := range n {
		if err := r.Add(i, "chk_"+strconv.Itoa(i), strconv.Itoa(i*7), "label", "021000022", "memo "+strconv.Itoa(i%97),
			money.Cents(i*101), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	var spooled int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && strings.HasPrefix(e.Name(), ".s.xlsx.") {
			spooled += fi.Size()
		}
	}
	if spooled < 10000 {
		t.Fatalf("before the commit, %d bytes of the workbook are compressed (files %v)", spooled, entries)
	}
	paths, err := r.Commit()
	if err != nil {
		t.Fatal(err)
	}
	s := reporttest.Check(t, paths[1], sample)
	if len(s.Raw) != n+1 || s.Raw[n][1] != "chk_"+strconv.Itoa(n-1) || s.Raw[n][6] != money.Cents((n-1)*101).String() {
		t.Fatalf("%d rows, last %q", len(s.Raw), s.Raw[len(s.Raw)-1])
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("left behind: %v", entries)
	}
}

// TestXLSXTextCells: text a reader could take for markup or for an escape
// reads back as written; white space at the ends stays; a cell longer than
// a spreadsheet holds is cut on a character (so the CSV, which holds it
// whole, is not written beside it here).
func TestXLSXTextCells(t *testing.T) {
	table := report.Table{Sheet: "t", Columns: []report.Column{{Name: "text", Kind: report.Text}, {Name: "amount", Kind: report.Money}}}
	long := strings.Repeat("€", excelize.TotalCellChars-1) + "😀" // the emoji is two UTF-16 units: it does not fit
	texts := []string{"<b>&amp;</b> \"q\" 'a'", "_x0041_ and _x005F_x0041_", " lead", "trail\t", "two\nlines\n", "_x005F_x0041_x0041_", "tab\tin", long}
	amounts := []money.Cents{5, 123456789012345678, 100, 1}
	paths, err := table.Write(filepath.Join(t.TempDir(), "t.csv"), []report.Format{report.XLSX}, func(r *report.Rows) error {
		for i, s := range texts {
			if err := r.Add(s, amounts[i%len(amounts)]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := reporttest.Check(t, paths[0], table)
	for i, want := range texts {
		if i == len(texts)-1 {
			want = strings.Repeat("€", excelize.TotalCellChars-1)
		}
		if got := s.Raw[i+1][0]; got != want {
			t.Errorf("row %d: %q (%d UTF-16 units), want %q (%d)", i+2, cut(got), len(utf16.Encode([]rune(got))), cut(want), len(utf16.Encode([]rune(want))))
		}
	}
	// Amounts are the exact decimal of their cents, even past the 15
	// digits a spreadsheet keeps of a number.
	for i, want := range []string{"0.05", "1234567890123456.78", "1", "0.01"} {
		if got := s.Raw[i+1][1]; got != want {
			t.Errorf("row %d: amount %q, want %q", i+2, got, want)
		}
	}
}

func cut(s string) string {
	if len([]rune(s)) > 40 {
		return string([]rune(s)[:40]) + "…"
	}
	return s
}
