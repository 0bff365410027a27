// Package reporttest checks the XLSX copies of reports in tests: that a
// workbook opens, has the report's header frozen and filtered, holds every
// cell with the type its column's Kind promises, never a formula, and says
// what the CSV beside it says.
package reporttest

import (
	"archive/zip"
	"encoding/csv"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/report"
)

// Sheet is what Check read from a workbook: its rows with the values a
// spreadsheet shows (Shown) and the stored values (Raw), header first.
type Sheet struct {
	Name       string
	Shown, Raw [][]string
}

// Col returns the index of the named column.
func (s *Sheet) Col(t testing.TB, name string) int {
	t.Helper()
	for i, h := range s.Shown[0] {
		if h == name {
			return i
		}
	}
	t.Fatalf("%s: no column %q in %q", s.Name, name, s.Shown[0])
	return -1
}

// Check opens the XLSX report at path, written for table, and fails t
// unless: it has one worksheet whose first row is the table's header,
// frozen, under an autofilter over the whole table; every column is as
// wide as its widest cell shows; no cell anywhere holds a formula (every
// cell is asked GetCellFormula, and the worksheet's XML is searched for
// <f> too); Text cells are strings in the text format "@", Int cells
// whole numbers, Money cells numbers in "#,##0.00" with at most two
// decimals, Date and DateTime cells numbers in yyyy-mm-dd and
// yyyy-mm-dd hh:mm:ss. When the CSV copy (report.PathAs(path, CSV))
// exists, every cell must say what the CSV's says: the same text (the CSV
// neutralised with report.Safe; characters XML cannot carry replaced, see
// report.XMLText), the same whole number, the same cents, the same date. It returns the sheet for further checks.
func Check(t testing.TB, path string, table report.Table) *Sheet {
	t.Helper()
	noFormulaInXML(t, path)
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) != 1 {
		t.Fatalf("%s: sheets %q, want one", path, sheets)
	}
	sheet := sheets[0]
	if sheet != table.Sheet {
		t.Errorf("%s: sheet %q, want %q", path, sheet, table.Sheet)
	}
	s := &Sheet{Name: path}
	if s.Shown, err = f.GetRows(sheet); err != nil {
		t.Fatal(err)
	}
	if s.Raw, err = f.GetRows(sheet, excelize.Options{RawCellValue: true}); err != nil {
		t.Fatal(err)
	}
	if len(s.Shown) == 0 {
		t.Fatalf("%s: empty sheet", path)
	}
	ncol := len(table.Columns)
	last, _ := excelize.ColumnNumberToName(ncol)

	// The header: frozen, filtered.
	if got, want := pad(s.Shown[0], ncol), table.Names(); !equal(got, want) {
		t.Errorf("%s: header %q, want %q", path, got, want)
	}
	panes, err := f.GetPanes(sheet)
	if err != nil || !panes.Freeze || panes.YSplit != 1 || panes.XSplit != 0 || panes.TopLeftCell != "A2" {
		t.Errorf("%s: panes %+v (%v), want the header row frozen", path, panes, err)
	}
	colsInOrder(t, path)
	wantFilter := "A1:" + last + strconv.Itoa(len(s.Shown))
	if got := autoFilter(t, path); got != wantFilter {
		t.Errorf("%s: autofilter %q, want %q", path, got, wantFilter)
	}

	// Every cell: no formula, the kind's type and format.
	styleFmt := map[int]string{}
	format := func(cell string) string {
		id, err := f.GetCellStyle(sheet, cell)
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := styleFmt[id]; ok {
			return s
		}
		st, err := f.GetStyle(id)
		if err != nil {
			t.Fatal(err)
		}
		code := strconv.Itoa(st.NumFmt)
		if st.CustomNumFmt != nil {
			code = *st.CustomNumFmt
		}
		styleFmt[id] = code
		return code
	}
	widest := make([]int, ncol)
	for r := range s.Shown {
		s.Shown[r], s.Raw[r] = pad(s.Shown[r], ncol), pad(s.Raw[r], ncol)
		if len(s.Shown[r]) > ncol {
			t.Errorf("%s row %d: %d cells, want %d", path, r+1, len(s.Shown[r]), ncol)
		}
		for c := range ncol + 1 { // and the column after the table
			cell, _ := excelize.CoordinatesToCellName(c+1, r+1)
			if fm, err := f.GetCellFormula(sheet, cell); err != nil || fm != "" {
				t.Errorf("%s %s: formula %q (%v)", path, cell, fm, err)
			}
			if c == ncol || r == 0 {
				continue
			}
			shown, raw := s.Shown[r][c], s.Raw[r][c]
			for _, line := range strings.Split(shown, "\n") {
				widest[c] = max(widest[c], len([]rune(line)))
			}
			if raw == "" {
				continue // blank
			}
			typ, err := f.GetCellType(sheet, cell)
			if err != nil {
				t.Fatal(err)
			}
			col := table.Columns[c]
			numeric := typ == excelize.CellTypeUnset || typ == excelize.CellTypeNumber
			text := typ == excelize.CellTypeInlineString || typ == excelize.CellTypeSharedString
			code := format(cell)
			switch col.Kind {
			case report.Text:
				if !text || code != strconv.Itoa(report.TextNumFmt) {
					t.Errorf("%s %s (%s): type %v format %q, want a text cell in format @: %q", path, cell, col.Name, typ, code, raw)
				}
			case report.Int:
				if _, err := strconv.ParseInt(raw, 10, 64); err != nil || !numeric || code != strconv.Itoa(report.IntNumFmt) {
					t.Errorf("%s %s (%s): type %v format %q value %q, want a whole number", path, cell, col.Name, typ, code, raw)
				}
			case report.Money:
				_, err := money.ParseWire(raw)
				if err != nil || !numeric || code != report.MoneyFormat {
					t.Errorf("%s %s (%s): type %v format %q value %q (%v), want a number in %s", path, cell, col.Name, typ, code, raw, err, report.MoneyFormat)
				}
			case report.Date, report.DateTime:
				want, layout := report.DateFormat, time.DateOnly
				if col.Kind == report.DateTime {
					want, layout = report.DateTimeFormat, time.DateTime
				}
				_, perr := strconv.ParseFloat(raw, 64)
				_, terr := time.Parse(layout, shown)
				if perr != nil || terr != nil || !numeric || code != want {
					t.Errorf("%s %s (%s): type %v format %q value %q shown %q, want a date in %s", path, cell, col.Name, typ, code, raw, shown, want)
				}
			}
		}
	}
	for c, col := range table.Columns {
		name, _ := excelize.ColumnNumberToName(c + 1)
		w, err := f.GetColWidth(sheet, name)
		if err != nil {
			t.Fatal(err)
		}
		need := min(max(widest[c], len(col.Name)), 78)
		if w < float64(need) {
			t.Errorf("%s: column %s (%s) is %.0f wide, its widest cell %d", path, name, col.Name, w, need)
		}
	}
	if _, err := os.Stat(report.PathAs(path, report.CSV)); err == nil {
		sameAsCSV(t, path, s, table)
	}
	return s
}

// sameAsCSV compares a workbook's cells with its CSV copy's.
func sameAsCSV(t testing.TB, path string, s *Sheet, table report.Table) {
	t.Helper()
	recs := ReadCSV(t, report.PathAs(path, report.CSV))
	if len(recs) != len(s.Shown) {
		t.Fatalf("%s: %d rows, the CSV %d", path, len(s.Shown), len(recs))
	}
	for r := range recs {
		for c, col := range table.Columns {
			want, shown, raw := recs[r][c], s.Shown[r][c], s.Raw[r][c]
			ok := true
			switch {
			case r == 0 || col.Kind == report.Text:
				ok = report.Safe(shown) == report.XMLText(want)
			case raw == "" || want == "":
				ok = raw == want
			case col.Kind == report.Int:
				ok = raw == want
			case col.Kind == report.Money:
				a, err1 := money.ParseWire(raw)
				b, err2 := money.ParseWire(want)
				ok = err1 == nil && err2 == nil && a == b
			default:
				ok = shown == want
			}
			if !ok {
				t.Errorf("%s row %d %s: xlsx %q (raw %q), csv %q", path, r+1, col.Name, shown, raw, want)
			}
		}
	}
}

// ReadCSV reads a CSV report.
func ReadCSV(t testing.TB, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(b), report.BOM)))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

var (
	formulaElem  = regexp.MustCompile(`<(\w+:)?f[ >/]`)
	autoFilterEl = regexp.MustCompile(`<autoFilter ref="([^"]+)"`)
	colElem      = regexp.MustCompile(`<col min="(\d+)" max="(\d+)"`)
)

// noFormulaInXML searches every worksheet of the package for a formula
// element, whatever excelize makes of it.
func noFormulaInXML(t testing.TB, path string) {
	t.Helper()
	for name, x := range sheetXML(t, path) {
		if m := formulaElem.FindString(x); m != "" {
			t.Errorf("%s: %s holds a formula element %q", path, name, m)
		}
	}
}

// colsInOrder checks that the column definitions come in ascending
// order, without which Excel "repairs" the workbook.
func colsInOrder(t testing.TB, path string) {
	t.Helper()
	for name, x := range sheetXML(t, path) {
		prev := 0
		for _, m := range colElem.FindAllStringSubmatch(x, -1) {
			lo, _ := strconv.Atoi(m[1])
			hi, _ := strconv.Atoi(m[2])
			if lo <= prev || hi < lo {
				t.Errorf("%s: %s: <col min=%d max=%d> after max=%d", path, name, lo, hi, prev)
			}
			prev = hi
		}
	}
}

func autoFilter(t testing.TB, path string) string {
	t.Helper()
	for _, x := range sheetXML(t, path) {
		if m := autoFilterEl.FindStringSubmatch(x); m != nil {
			return strings.ReplaceAll(m[1], "$", "")
		}
	}
	return ""
}

func sheetXML(t testing.TB, path string) map[string]string {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer z.Close()
	out := map[string]string{}
	for _, f := range z.File {
		if !strings.HasPrefix(f.Name, "xl/worksheets/") || !strings.HasSuffix(f.Name, ".xml") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = string(b)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no worksheet", path)
	}
	return out
}

func pad(row []string, n int) []string {
	for len(row) < n {
		row = append(row, "")
	}
	return row
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
