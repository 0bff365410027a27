package submit

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/report/reporttest"
	"github.com/batchd/batchd/internal/state"
)

type dirOutbox struct{ dir string }

func (o dirOutbox) Upload(_ context.Context, dir, name string, r io.Reader) error {
	p := filepath.Join(o.dir, dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

// TestResultsReportFormats: a finished batch's results report is written
// and delivered as CSV and XLSX; the CSV is what it always was, and the
// XLSX keeps identifiers as text, amounts as numbers and a hostile label
// as a plain string.
func TestResultsReportFormats(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		db := ledgertest.Open(t, backend, state.Options{})
		l, err := db.BeginBatch(payment.FileMeta{Name: "payroll.csv", SHA256: "sha"})
		if err != nil {
			t.Fatal(err)
		}
		pays := []payment.Payment{
			{Amount: 123456, Memo: "+1", Name: "=HYPERLINK(\"http://x\",\"y\")", Email: "a@b.c", Number: "0000070001",
				Label: "=HYPERLINK(\"http://evil\",\"click\")", BankRouting: "021000021", BankAccount: "000123456789"},
			{Amount: 29, Memo: "-2", Name: "@Payee", Email: "a@b.c", Number: "11/12", BankRouting: "021000021", BankAccount: "0000000016"},
		}
		for i, p := range pays {
			if err := l.Add(i+2, p); err != nil {
				t.Fatal(err)
			}
		}
		b, err := l.Commit(2, 0)
		if err != nil {
			t.Fatal(err)
		}
		k0, k1 := payment.RowKey{Batch: b.ID, Line: 2}, payment.RowKey{Batch: b.ID, Line: 3}
		if _, err := db.Send(k0); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Created(k0, payment.CheckResult{CheckID: "0000abc", Status: payment.StatusInProcess, Risk: "Pass"}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Send(k1); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Reject(k1, "-account closed"); err != nil {
			t.Fatal(err)
		}

		dir, out := t.TempDir(), dirOutbox{t.TempDir()}
		both := []report.Format{report.CSV, report.XLSX}
		names, err := DeliverResults(context.Background(), db, dir, report.Destination{Outbox: out, Dir: "outbox"}, both)
		if err != nil {
			t.Fatal(err)
		}
		if len(names) != 1 || names[0] != "payroll.csv.results.csv, payroll.csv.results.xlsx" {
			t.Fatalf("delivered %q", names)
		}
		local := filepath.Join(dir, "batch-000001-payroll.csv.results")
		for _, ext := range []string{".csv", ".xlsx"} {
			a, err1 := os.ReadFile(local + ext)
			b, err2 := os.ReadFile(filepath.Join(out.dir, "outbox", "payroll.csv.results"+ext))
			if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
				t.Fatalf("%s: outbox copy differs (%v %v)", ext, err1, err2)
			}
		}
		csv := reporttest.ReadCSV(t, local+".csv")
		if strings.Join(csv[0], ",") != "line,check_id,number,label,amount,status,risk,fund_confirmation,error,name,account,account_change,bank" {
			t.Fatalf("CSV header %q", csv[0])
		}
		raw, _ := os.ReadFile(local + ".csv")
		if !strings.Contains(string(raw), `"'=HYPERLINK(""http://evil"",""click"")"`) || !strings.Contains(string(raw), `"1234.56"`) {
			t.Fatalf("CSV:\n%s", raw)
		}

		s := reporttest.Check(t, local+".xlsx", ResultsTable)
		row := s.Shown[1]
		if row[s.Col(t, "number")] != "0000070001" || row[s.Col(t, "check_id")] != "0000abc" ||
			row[s.Col(t, "label")] != "=HYPERLINK(\"http://evil\",\"click\")" || row[s.Col(t, "amount")] != "1,234.56" ||
			row[s.Col(t, "name")] != "=HYPERLINK(\"http://x\",\"y\")" || row[s.Col(t, "account")] != "****6789" {
			t.Errorf("first row %q", row)
		}
		row = s.Shown[2]
		if row[s.Col(t, "number")] != "11/12" || row[s.Col(t, "amount")] != "0.29" || row[s.Col(t, "error")] != "-account closed" ||
			row[s.Col(t, "status")] != "rejected" || row[s.Col(t, "line")] != "3" {
			t.Errorf("second row %q", row)
		}
		if c, err := money.ParseWire(s.Raw[1][s.Col(t, "amount")]); err != nil || c != 123456 {
			t.Errorf("amount raw %q", s.Raw[1][s.Col(t, "amount")])
		}
		// Delivered once: a second run sends nothing.
		if names, err := DeliverResults(context.Background(), db, dir, report.Destination{Outbox: out, Dir: "outbox"}, both); err != nil || len(names) != 0 {
			t.Fatalf("second delivery %q %v", names, err)
		}
	})
}
