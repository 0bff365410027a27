package reporttest

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/report"
)

// recorder is a testing.TB that keeps the failures instead of failing.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(f, a...))
}
func (r *recorder) Fatalf(f string, a ...any) { r.Errorf(f, a...); panic(r) }
func (r *recorder) Fatal(a ...any)            { r.Errorf("%s", fmt.Sprint(a...)); panic(r) }

func (r *recorder) check(path string, table report.Table) string {
	func() {
		defer func() {
			if p := recover(); p != nil && p != r {
				panic(p)
			}
		}()
		Check(r, path, table)
	}()
	return strings.Join(r.msgs, "\n")
}

var table = report.Table{Sheet: "t", Columns: []report.Column{
	{Name: "id", Kind: report.Text}, {Name: "amount", Kind: report.Money}, {Name: "day", Kind: report.Date},
}}

// TestCheckCatches: a formula anywhere, an amount stored as text, a date
// stored as a number without a date format, and an identifier stored as a
// number each fail Check.
func TestCheckCatches(t *testing.T) {
	dir := t.TempDir()
	paths, err := table.Write(filepath.Join(dir, "r.csv"), []report.Format{report.XLSX}, func(r *report.Rows) error {
		for i := range 3 {
			if err := r.Add(fmt.Sprintf("%04d", i), money.Cents(100*i+1), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if msgs := (&recorder{TB: t}).check(paths[0], table); msgs != "" {
		t.Fatalf("a good workbook fails:\n%s", msgs)
	}
	f, err := excelize.OpenFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	f.SetCellFormula("t", "A2", `HYPERLINK("http://evil","x")`)
	f.SetCellStr("t", "B3", "1.01")
	f.SetCellStyle("t", "C3", "C3", 0) // a number, no longer shown as a date
	f.SetCellInt("t", "A4", 2)
	bad := filepath.Join(dir, "bad.xlsx")
	if err := f.SaveAs(bad); err != nil {
		t.Fatal(err)
	}
	f.Close()
	msgs := (&recorder{TB: t}).check(bad, table)
	for _, want := range []string{"formula", "B3 (amount)", "C3 (day)", "A4 (id)"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("Check missed %s:\n%s", want, msgs)
		}
	}
}

// TestCheckNegativeAmount: a negative amount is the plain number in the
// CSV (-0.05: a number, never a formula) and a number in the XLSX; Check
// takes them as the same amount.
func TestCheckNegativeAmount(t *testing.T) {
	dir := t.TempDir()
	paths, err := table.Write(filepath.Join(dir, "r.csv"), []report.Format{report.CSV, report.XLSX}, func(r *report.Rows) error {
		return r.Add("0001", money.Cents(-5), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	if msgs := rec.check(report.PathAs(paths[0], report.XLSX), table); msgs != "" {
		t.Fatalf("a negative amount: %s", msgs)
	}
}
