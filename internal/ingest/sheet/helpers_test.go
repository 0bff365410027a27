package sheet_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/ingest/sheet"
)

// runDate is the run date of every test: authorization dates are judged
// against it, never against today.
var runDate = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

func opts() csvfile.Options { return csvfile.Options{RunDate: runDate, TestMode: true} }

// cell is one cell a test workbook holds: text (a shared string), or a
// number stored as the exact decimal text num, with a number format.
type cell struct {
	text   string
	num    string
	numFmt int
	// formula is set on the cell; with neither text nor num it has no
	// cached value.
	formula string
}

func txt(s string) cell { return cell{text: s} }
func num(s string) cell { return cell{num: s} }

// build returns an XLSX workbook whose sheets hold rows, as excelize
// writes it; sheets[0] is the first sheet.
func build(t testing.TB, sheets map[string][][]cell, order ...string) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	for i, name := range order {
		if i == 0 {
			if err := f.SetSheetName("Sheet1", name); err != nil {
				t.Fatal(err)
			}
		} else if _, err := f.NewSheet(name); err != nil {
			t.Fatal(err)
		}
		for r, row := range sheets[name] {
			for c, x := range row {
				ref, _ := excelize.CoordinatesToCellName(c+1, r+1)
				var err error
				switch {
				case x.formula != "":
					err = f.SetCellFormula(name, ref, x.formula)
				case x.num != "":
					err = f.SetCellDefault(name, ref, x.num)
				case x.text != "":
					err = f.SetCellStr(name, ref, x.text)
				}
				if err != nil {
					t.Fatal(err)
				}
				if x.numFmt != 0 {
					st, err := f.NewStyle(&excelize.Style{NumFmt: x.numFmt})
					if err != nil {
						t.Fatal(err)
					}
					if err := f.SetCellStyle(name, ref, ref, st); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// one builds a workbook of one sheet, "Payments".
func one(t testing.TB, rows ...[]cell) []byte {
	return build(t, map[string][][]cell{"Payments": rows}, "Payments")
}

// texts is a row of text cells.
func texts(s ...string) []cell {
	out := make([]cell, len(s))
	for i, x := range s {
		out[i] = txt(x)
	}
	return out
}

// open reads a workbook's sheet.
func open(t testing.TB, data []byte, o sheet.Options) *sheet.Workbook {
	t.Helper()
	w, err := sheet.Open(bytes.NewReader(data), o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// payments parses a payment workbook, returning its rows and findings.
func payments(t testing.TB, data []byte, o sheet.Options) ([]csvfile.Payment, []csvfile.Finding, error) {
	t.Helper()
	w := open(t, data, o)
	var rows []csvfile.Payment
	var findings []csvfile.Finding
	_, err := csvfile.ParseSource(w.Records(), opts(),
		func(p csvfile.Payment) error { rows = append(rows, p); return nil },
		func(f csvfile.Finding) error { findings = append(findings, f); return nil })
	return rows, findings, err
}

var payHeader = texts("number", "amount", "memo", "name", "email", "authorization_date", "zip", "bank_routing", "bank_account")
