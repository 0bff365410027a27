package report_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/report/reporttest"
)

var sample = report.Table{Sheet: "sample", Columns: []report.Column{
	{"line", report.Int}, {"check_id", report.Text}, {"number", report.Text}, {"label", report.Text},
	{"routing", report.Text}, {"memo", report.Text}, {"amount", report.Money}, {"day", report.Date},
	{"seen", report.DateTime},
}}

type status string // a string type, as payment.Status is

var ny = func() *time.Location {
	l, err := time.LoadLocation("America/New_York")
	if err != nil {
		panic(err)
	}
	return l
}()

// sampleRows are typed cells with everything a spreadsheet mangles or
// runs: leading zeros, a fraction that looks like a date, formulas, DDE,
// amounts a float cannot hold exactly, and blanks.
var sampleRows = [][]any{
	{2, "chk_0001", "0000070001", "=HYPERLINK(\"http://evil\",\"x\")", "021000022", "+1",
		money.Cents(123456789), time.Date(2026, 11, 22, 23, 30, 0, 0, ny), time.Date(2026, 11, 22, 23, 30, 15, 0, ny)},
	{uint32(3), status("printed"), "11/12", "@SUM(A1)", "-2+3", "=cmd|' /C calc'!'A0'",
		money.Cents(29), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), time.Time{}},
	{uint64(40), "", "1e5", "  -x", "Acme, \"Inc\"\nline two", "\t=1",
		money.Cents(10), nil, time.Date(2026, 3, 2, 5, 0, 0, 0, time.UTC)},
	{nil, "x", "", "", "", "bad\xffutf8\x01", nil, time.Time{}, nil},
}

func fill(r *report.Rows) error {
	for _, row := range sampleRows {
		if err := r.Add(row...); err != nil {
			return err
		}
	}
	return nil
}

// TestCSVIsUnchanged: the table's CSV is byte for byte what WriteFile
// writes from the same cells as text, the way every report wrote them.
func TestCSVIsUnchanged(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.csv")
	err := report.WriteFile(old, func(w *report.Writer) error {
		if err := w.Write(sample.Names()...); err != nil {
			return err
		}
		for _, row := range sampleRows {
			rec := make([]string, len(row))
			for i, x := range row {
				switch v := x.(type) {
				case int:
					rec[i] = strconv.Itoa(v)
				case uint32:
					rec[i] = strconv.FormatUint(uint64(v), 10)
				case uint64:
					rec[i] = strconv.FormatUint(v, 10)
				case string:
					rec[i] = v
				case status:
					rec[i] = string(v)
				case money.Cents:
					rec[i] = v.String()
				case time.Time:
					if !v.IsZero() && i == 7 {
						rec[i] = v.Format(time.DateOnly)
					} else if !v.IsZero() {
						rec[i] = v.Format(time.DateTime)
					}
				}
			}
			if err := w.Write(rec...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	paths, err := sample.Write(filepath.Join(dir, "new.csv"), nil, fill)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 || paths[0] != filepath.Join(dir, "new.csv") {
		t.Fatalf("no formats should mean the CSV alone: %v", paths)
	}
	a, _ := os.ReadFile(old)
	b, _ := os.ReadFile(paths[0])
	if !bytes.Equal(a, b) {
		t.Fatalf("CSV differs:\n%q\n%q", a, b)
	}
	// Formulas are guarded; a plain signed number (+1) is a number, not a
	// formula, and is shown as typed.
	if !strings.Contains(string(b), `"'=HYPERLINK(""http://evil"",""x"")"`) || !strings.Contains(string(b), `"'-2+3"`) || !strings.Contains(string(b), `,"+1",`) {
		t.Fatalf("formula protection lost: %s", b)
	}
	rec, err := sample.CSVRecord(sampleRows[0]...)
	if err != nil || rec[6] != "1234567.89" || rec[7] != "2026-11-22" || rec[8] != "2026-11-22 23:30:15" {
		t.Fatalf("CSVRecord %q %v", rec, err)
	}
}

// TestXLSXCells: every kind of cell is typed as promised, the hostile
// values are plain strings, and no cell holds a formula.
func TestXLSXCells(t *testing.T) {
	dir := t.TempDir()
	paths, err := sample.Write(filepath.Join(dir, "r.csv"), []report.Format{report.CSV, report.XLSX, report.CSV}, fill)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || paths[1] != filepath.Join(dir, "r.xlsx") {
		t.Fatalf("paths %v", paths)
	}
	s := reporttest.Check(t, paths[1], sample)
	again, err := sample.Write(filepath.Join(dir, "again.csv"), []report.Format{report.XLSX}, fill)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(paths[1])
	b, _ := os.ReadFile(again[0])
	if !bytes.Equal(a, b) {
		t.Error("the same report written twice differs: a rerun would replace the workbook with a different file")
	}
	if len(s.Shown) != len(sampleRows)+1 {
		t.Fatalf("%d rows", len(s.Shown))
	}
	want := [][]string{
		{"2", "chk_0001", "0000070001", "=HYPERLINK(\"http://evil\",\"x\")", "021000022", "+1", "1,234,567.89", "2026-11-22", "2026-11-22 23:30:15"},
		{"3", "printed", "11/12", "@SUM(A1)", "-2+3", "=cmd|' /C calc'!'A0'", "0.29", "2026-01-02", ""},
		{"40", "", "1e5", "  -x", "Acme, \"Inc\"\nline two", "\t=1", "0.10", "", "2026-03-02 05:00:00"},
		{"", "x", "", "", "", "bad\uFFFDutf8\uFFFD", "", "", ""},
	}
	for r, w := range want {
		for c := range w {
			if got := s.Shown[r+1][c]; got != w[c] {
				t.Errorf("row %d %s: shown %q, want %q", r+2, sample.Columns[c].Name, got, w[c])
			}
		}
	}
	if s.Raw[1][6] != "1234567.89" || s.Raw[2][6] != "0.29" || s.Raw[3][6] != "0.1" {
		t.Errorf("money raw values %q %q %q", s.Raw[1][6], s.Raw[2][6], s.Raw[3][6])
	}
	f, err := excelize.OpenFile(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, cell := range []string{"D2", "F2", "D3", "E3", "F3", "F4"} {
		typ, _ := f.GetCellType("sample", cell)
		fm, _ := f.GetCellFormula("sample", cell)
		if typ != excelize.CellTypeInlineString || fm != "" {
			t.Errorf("%s: type %v formula %q, want a plain string", cell, typ, fm)
		}
	}
	// 23:30 in New York on 22 November is the 22nd: the wall clock is kept.
	if v, _ := f.GetCellValue("sample", "H2", excelize.Options{RawCellValue: true}); v != "46348" {
		t.Errorf("date serial %s", v)
	}
}

// TestEmptyAndXLSXOnly: a report without rows is a header with its filter;
// report.formats: [xlsx] writes no CSV.
func TestEmptyAndXLSXOnly(t *testing.T) {
	dir := t.TempDir()
	paths, err := sample.Write(filepath.Join(dir, "e.csv"), []report.Format{report.XLSX}, func(*report.Rows) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 || filepath.Base(paths[0]) != "e.xlsx" {
		t.Fatalf("paths %v", paths)
	}
	if _, err := os.Stat(filepath.Join(dir, "e.csv")); !os.IsNotExist(err) {
		t.Fatalf("a CSV was written: %v", err)
	}
	if s := reporttest.Check(t, paths[0], sample); len(s.Shown) != 1 {
		t.Fatalf("rows %q", s.Shown)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
	st, _ := os.Stat(paths[0])
	if st.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}
}

// TestWriteIsAtomic: a failing fill or a bad cell replaces nothing and
// leaves no temporary file.
func TestWriteIsAtomic(t *testing.T) {
	dir := t.TempDir()
	both := []report.Format{report.CSV, report.XLSX}
	paths, err := sample.Write(filepath.Join(dir, "a.csv"), both, fill)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, p := range paths {
		before[p], _ = os.ReadFile(p)
	}
	for name, bad := range map[string]func(*report.Rows) error{
		"fill fails": func(r *report.Rows) error { fill(r); return os.ErrClosed },
		"too few":    func(r *report.Rows) error { return r.Add(1, "x") },
		"wrong type": func(r *report.Rows) error { return r.Add("1", "", "", "", "", "", 1.5, nil, nil) },
		"float":      func(r *report.Rows) error { return r.Add(1, "", "", "", "", "", 12.34, nil, nil) },
		"date text":  func(r *report.Rows) error { return r.Add(1, "", "", "", "", "", nil, "2026-01-02", nil) },
	} {
		if _, err := sample.Write(filepath.Join(dir, "a.csv"), both, bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := sample.Write(filepath.Join(dir, "a.csv"), []report.Format{"ods"}, fill); err == nil {
		t.Error("an unknown format was accepted")
	}
	for p, b := range before {
		if now, _ := os.ReadFile(p); !bytes.Equal(now, b) {
			t.Errorf("%s changed", p)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("left behind: %v", entries)
	}
	r, err := sample.Create(filepath.Join(dir, "b.csv"), both)
	if err != nil {
		t.Fatal(err)
	}
	fill(r)
	r.Discard()
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("Discard left: %v", entries)
	}
}

// TestLargeReportStreams: many rows go through the spool and come back
// in order.
func TestLargeReportStreams(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	dir := t.TempDir()
	const n = 5000
	paths, err := sample.Write(filepath.Join(dir, "big.csv"), []report.Format{report.CSV, report.XLSX}, func(r *report.Rows) error {
		for i := range n {
			if err := r.Add(i, "chk_"+strconv.Itoa(i), strconv.Itoa(i), "l", "021000022", strings.Repeat("m", i%50),
				money.Cents(i*101), time.Date(2026, 1, 1+i%28, 0, 0, 0, 0, time.UTC), nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, _ := f.GetRows("sample", excelize.Options{RawCellValue: true})
	if len(rows) != n+1 || rows[n][1] != "chk_"+strconv.Itoa(n-1) || rows[n][6] != money.Cents((n-1)*101).String() {
		t.Fatalf("%d rows, last %q", len(rows), rows[len(rows)-1])
	}
}

type outbox map[string][]byte

func (o outbox) Upload(_ context.Context, dir, name string, r io.Reader) error {
	b, err := io.ReadAll(r)
	o[dir+"/"+name] = b
	return err
}

func TestDeliverAllAndMove(t *testing.T) {
	dir := t.TempDir()
	paths, err := sample.Write(filepath.Join(dir, "batch-000001-pay.csv.results.csv"), []report.Format{report.CSV, report.XLSX}, fill)
	if err != nil {
		t.Fatal(err)
	}
	out := outbox{}
	if err := (report.Destination{Outbox: out, Dir: "/out"}).DeliverAll(context.Background(), paths, "pay.csv.results.csv"); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out["/out/pay.csv.results.csv"] == nil || out["/out/pay.csv.results.xlsx"] == nil {
		t.Fatalf("outbox %v", len(out))
	}
	if err := (report.Destination{}).DeliverAll(context.Background(), paths, "x.csv"); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "kept", "k.xlsx")
	if err := report.Move(paths[1], dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); !bytes.Equal(b, out["/out/pay.csv.results.xlsx"]) {
		t.Fatal("moved report differs")
	}
	if _, err := os.Stat(paths[1]); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("source still there: %v", err)
	}
	if err := report.Move(paths[1], dst); err == nil {
		t.Fatal("moving a missing report succeeded")
	}
	for in, want := range map[string]string{"status-2026-11-22.csv": "status-2026-11-22.xlsx", "p.csv.results.xlsx": "p.csv.results.xlsx",
		"p.csv.results.csv": "p.csv.results.xlsx", "p": "p.xlsx"} {
		if got := report.PathAs(in, report.XLSX); got != want {
			t.Errorf("PathAs(%q) = %q, want %q", in, got, want)
		}
	}
	if got := report.PathAs("a.csv.archive.xlsx", report.CSV); got != "a.csv.archive.csv" {
		t.Error(got)
	}
}

// TestXLSXColumnWidths: each column is as wide as its widest cell (the
// header with room for its filter button included), two characters more,
// at most 80, though the widths are only known after the last row and
// the rows were written as they came.
func TestXLSXColumnWidths(t *testing.T) {
	dir := t.TempDir()
	paths, err := sample.Write(filepath.Join(dir, "w.csv"), []report.Format{report.XLSX}, func(r *report.Rows) error {
		for i := range 3000 {
			memo := "m"
			if i == 2999 {
				memo = strings.Repeat("w", 40) // the widest memo comes last
			}
			if err := r.Add(i, "chk_"+strconv.Itoa(i), "1", "l", strings.Repeat("r", 200), memo, money.Cents(1), nil, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for col, want := range map[string]float64{"A": 9, "B": 13, "E": 80, "F": 42, "I": 9} {
		if got, err := f.GetColWidth("sample", col); err != nil || got != want {
			t.Errorf("column %s width %v (%v), want %v", col, got, err, want)
		}
	}
	rows, err := f.GetRows("sample")
	if err != nil || len(rows) != 3001 || rows[3000][5] != strings.Repeat("w", 40) {
		t.Fatalf("%d rows (%v)", len(rows), err)
	}
}
