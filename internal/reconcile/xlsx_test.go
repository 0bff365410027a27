package reconcile

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/report/reporttest"
)

// TestReportsInXLSX: with report.formats [csv, xlsx], every daily report
// has an XLSX copy beside the CSV, delivered too, whose cells are typed
// (reporttest.Check: text identifiers, numeric amounts, date cells, no
// formula anywhere) and say what the CSV says; the settlement's totals are
// numbers that equal the status report's sums in cents.
func TestReportsInXLSX(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		a := e.load("0042.csv", pay(123456, 16, `=HYPERLINK("http://evil","x")`), pay(29, 16, "+1"), pay(10, 16, "@SUM(1)"))
		var ids []string
		for _, k := range e.keys(a) {
			ids = append(ids, e.submit(k))
		}
		e.outside(`=cmd|' /C calc'!'A0'`, "0000070001", 4200)
		e.deposit(ids[0])
		e.advance(1)

		out := &dirOutbox{dir: t.TempDir()}
		sum := e.run(Options{Formats: []report.Format{report.CSV, report.XLSX}, Outbox: report.Destination{Outbox: out, Dir: "/outbox"}})
		tuesday := Date{2026, 3, 3}
		var want []string
		for _, f := range []report.Format{report.CSV, report.XLSX} {
			for _, kind := range []string{"status", "settlement", "exceptions"} {
				want = append(want, report.PathAs(e.reportPath(kind, tuesday), f))
			}
		}
		if !slices.Equal(sum.Reports, want) {
			t.Fatalf("reports %q\nwant %q", sum.Reports, want)
		}
		for _, p := range sum.Reports {
			local, _ := os.ReadFile(p)
			remote, err := os.ReadFile(filepath.Join(out.dir, "outbox", filepath.Base(p)))
			if err != nil || string(local) != string(remote) {
				t.Errorf("outbox copy of %s differs (%v)", filepath.Base(p), err)
			}
		}
		if filepath.Base(sum.Reports[3]) != "status-2026-03-03.xlsx" {
			t.Fatalf("name %s", sum.Reports[3])
		}

		status := reporttest.Check(t, sum.Reports[3], StatusTable)
		settlement := reporttest.Check(t, sum.Reports[4], SettlementTable)
		exceptions := reporttest.Check(t, sum.Reports[5], ExceptionsTable)

		if len(status.Shown) != 4 {
			t.Fatalf("status rows %q", status.Shown)
		}
		byName := map[string][]string{}
		for _, r := range status.Shown[1:] {
			byName[r[status.Col(t, "name")]] = r
		}
		evil := byName[`=HYPERLINK("http://evil","x")`]
		if evil == nil || byName["+1"] == nil || byName["@SUM(1)"] == nil {
			t.Fatalf("hostile names not kept as text: %q", status.Shown)
		}
		if evil[status.Col(t, "file")] != "0042.csv" || evil[status.Col(t, "amount")] != "1,234.56" ||
			evil[status.Col(t, "status")] != "deposited" || evil[status.Col(t, "deposited_on")] != "2026-03-03" ||
			evil[status.Col(t, "created")] != "2026-03-02 10:00:00" || evil[status.Col(t, "batch")] != "1" {
			t.Errorf("status row %q", evil)
		}
		var unknown []string
		for _, r := range exceptions.Shown[1:] {
			if r[exceptions.Col(t, "kind")] == KindUnknown {
				unknown = r
			}
		}
		if unknown == nil || unknown[exceptions.Col(t, "number")] != "0000070001" ||
			unknown[exceptions.Col(t, "label")] != `=cmd|' /C calc'!'A0'` || unknown[exceptions.Col(t, "amount")] != "42.00" ||
			unknown[exceptions.Col(t, "batch")] != "" || unknown[exceptions.Col(t, "line")] != "" {
			t.Errorf("unknown check %q in %q", unknown, exceptions.Shown)
		}

		// The outcome totals are numbers, which together are the sum of the
		// status amounts in cents: the money paid, on its way and not paid.
		var total money.Cents
		for _, r := range status.Raw[1:] {
			c, err := money.ParseWire(r[status.Col(t, "amount")])
			if err != nil {
				t.Fatal(err)
			}
			total += c
		}
		var outcomes money.Cents
		n := 0
		for _, r := range settlement.Raw[1:] {
			if r[settlement.Col(t, "section")] != SectionOutcomeTotal {
				continue
			}
			c, err := money.ParseWire(r[settlement.Col(t, "amount")])
			if err != nil {
				t.Fatal(err)
			}
			outcomes += c
			n++
		}
		if n != 3 || outcomes != total || total != 123495 {
			t.Errorf("%d outcome totals summing to %s, status sum %s", n, outcomes, total)
		}
		var deposited []string
		for _, r := range settlement.Shown {
			if r[0] == SectionDeposited {
				deposited = r
			}
		}
		if deposited == nil || deposited[settlement.Col(t, "deposit_date")] != "2026-03-03" || deposited[settlement.Col(t, "amount")] != "1,234.56" {
			t.Errorf("deposits %q", deposited)
		}
	})
}

// TestPruneRemovesXLSXCopies: old XLSX copies and their temporary files
// go with the CSVs; recent ones and foreign files stay.
func TestPruneRemovesXLSXCopies(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC)
	files := map[string]bool{ // name -> survives
		"status-2026-03-31.xlsx":                   true,
		"settlement-2026-03-01.xlsx":               true,
		"exceptions-2026-02-28.xlsx":               false,
		"status-2025-12-01.xlsx":                   false,
		"status-2025-12-01.xlsx.bak":               true,
		"status-2025-12-01.xls":                    true,
		".status-2026-03-30.xlsx.123.tmp":          false,
		".status-2026-03-30.xlsx.456.rows.tmp":     false,
		".settlement-2026-03-31.xlsx.789.rows.tmp": true, // being written
	}
	old := now.Add(-48 * time.Hour)
	for name := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, ".status") {
			os.Chtimes(p, old, old)
		} else {
			os.Chtimes(p, now, now)
		}
	}
	n, err := prune(dir, DateOf(now), 30, now)
	if err != nil || n != 4 {
		t.Errorf("deleted %d files (%v), want 4", n, err)
	}
	for name, survives := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if (err == nil) != survives {
			t.Errorf("%s: exists %v, want %v", name, err == nil, survives)
		}
	}
}

// TestUploadFailureNamesXLSX: a report that cannot be delivered is named
// in the error, every copy stays local.
func TestUploadFailureNamesXLSX(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		e.submit(e.keys(e.load("a.csv", pay(100, 16, "A")))[0])
		sum, err := e.runner(nil, Options{Formats: []report.Format{report.XLSX},
			Outbox: report.Destination{Outbox: failingOutbox{}, Dir: "/outbox"}}).Run(context.Background(), Window{})
		if err == nil || !strings.Contains(err.Error(), "deliver status-2026-03-02.xlsx to /outbox") {
			t.Fatalf("error %v", err)
		}
		if len(sum.Reports) != 3 {
			t.Fatalf("reports %q", sum.Reports)
		}
		for _, p := range sum.Reports {
			if !strings.HasSuffix(p, ".xlsx") {
				t.Errorf("%s is not an xlsx", p)
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("local report: %v", err)
			}
		}
	})
}
