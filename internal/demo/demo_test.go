package demo

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// The embedded samples must be the files in testdata/demo, which the README
// points finance users at.
func TestSamplesMatchTestdata(t *testing.T) {
	entries, err := Samples.ReadDir("samples")
	if err != nil || len(entries) != 4 {
		t.Fatalf("samples: %v %v", entries, err)
	}
	for _, e := range entries {
		emb, _ := Samples.ReadFile("samples/" + e.Name())
		disk, err := os.ReadFile(filepath.Join("..", "..", "testdata", "demo", e.Name()))
		if err != nil || !bytes.Equal(emb, disk) {
			t.Fatalf("samples/%s differs from testdata/demo/%s (%v): copy it again", e.Name(), e.Name(), err)
		}
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(b), report.BOM))).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// The demo says what it shows on any day: run on a Monday, a Friday, the
// day before Thanksgiving and Christmas Eve, it lets the calendar days
// pass that make three business days (worked out by hand here), after
// which no check is left in process.
func TestDemoRunsTheWholeJob(t *testing.T) {
	for _, tc := range []struct {
		name       string
		at         time.Time
		days       int
		from, till string
	}{
		{"monday", clocktest.Monday, 3, "Mon 2 Mar 2026", "Thu 5 Mar 2026"},
		{"friday", clocktest.Friday, 5, "Fri 6 Mar 2026", "Wed 11 Mar 2026"},
		{"before-thanksgiving", clocktest.BeforeThanksgiving, 6, "Wed 25 Nov 2026", "Tue 1 Dec 2026"},
		{"christmas-eve", clocktest.ChristmasEve, 6, "Thu 24 Dec 2026", "Wed 30 Dec 2026"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := runDemo(t, tc.at)
			want := fmt.Sprintf("let 3 business days pass\n   %d calendar days, %s to %s:", tc.days, tc.from, tc.till)
			if !strings.Contains(text, want) || strings.Contains(text, "in_process") || strings.Contains(text, "still in process") {
				t.Fatalf("want %q and no check in process:\n%s", want, text)
			}
		})
	}
}

// runDemo runs the demo on day at and checks what it shows whatever the
// day: the summary, the reports in the outbox and their totals.
func runDemo(t *testing.T, at time.Time) string {
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{Dir: filepath.Join(t.TempDir(), "not-yet-made"), Out: &out, Date: at})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"payroll-clean.csv", "accepted", "vendors-errors.csv", "rejected",
		"20 checks created", "1 voided", "cancel-checks.csv: 1 voided, 1 not (too late to void", "edit-checks.csv: 1 edited (amount ", "3 customers created, 3 bank accounts linked, 0 refused", "Checks by status:", "deposited", "printed",
		"Money by outcome:", "paid", "on its way", "not paid", "payment links: 2 open, 1 paid"} {
		if !strings.Contains(text, want) {
			t.Fatalf("summary lacks %q:\n%s", want, text)
		}
	}
	entries, _ := os.ReadDir(res.Outbox)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	all := strings.Join(names, " ")
	for _, want := range []string{"payroll-clean.csv.results.csv", "vendors-errors.csv.rejects.csv", "customers.csv.results.csv", "status-", "settlement-", "exceptions-"} {
		if !strings.Contains(all, want) {
			t.Fatalf("outbox %v lacks %s", names, want)
		}
	}

	results := readCSV(t, filepath.Join(res.Outbox, "payroll-clean.csv.results.csv"))
	if len(results) != 21 {
		t.Fatalf("results report has %d lines, want header + 20", len(results))
	}
	rejects := readCSV(t, filepath.Join(res.Outbox, "vendors-errors.csv.rejects.csv"))
	if len(rejects) != 5 {
		t.Fatalf("rejects report has %d lines, want header + 4", len(rejects))
	}

	// The settlement grand total equals the status report's sum.
	var status, settlement [][]string
	for _, n := range names {
		switch {
		case !strings.HasSuffix(n, ".csv"): // the XLSX copies
		case strings.HasPrefix(n, "status-"):
			status = readCSV(t, filepath.Join(res.Outbox, n))
		case strings.HasPrefix(n, "settlement-"):
			settlement = readCSV(t, filepath.Join(res.Outbox, n))
		}
	}
	amountCol := indexOf(status[0], "amount")
	var sum money.Cents
	for _, rec := range status[1:] {
		c, err := money.Parse(rec[amountCol])
		if err != nil {
			t.Fatal(err)
		}
		sum += c
	}
	// The settlement says what was paid: its paid figure is exactly the
	// deposited lines of the status report, not paid the failed, void and
	// deleted ones; the three outcomes together are the status report's
	// sum, and no line adds them up.
	statusCol, outcomeCol := indexOf(status[0], "status"), indexOf(status[0], "outcome")
	want := map[string]money.Cents{}
	for _, rec := range status[1:] {
		c, _ := money.Parse(rec[amountCol])
		o := rec[outcomeCol]
		if st := payment.ParseStatus(rec[statusCol]).Outcome(); o != string(st) && !(st == payment.OutcomeNotPaid && o == string(payment.OutcomeCancelled)) {
			t.Fatalf("status line %q: outcome %s for status %s", rec, o, rec[statusCol])
		}
		want[o] += c
	}
	got := map[string]string{}
	for _, rec := range settlement[1:] {
		if rec[0] == "grand_total" || rec[0] == "batch_total" {
			t.Fatalf("settlement adds every status up: %q", rec)
		}
		if rec[0] == "outcome_total" {
			got[rec[indexOf(settlement[0], "outcome")]] = rec[len(rec)-1]
		}
	}
	var outcomes money.Cents
	for _, o := range payment.Outcomes {
		if got[string(o)] != want[string(o)].String() {
			t.Fatalf("settlement %s %q, status report %s", o, got[string(o)], want[string(o)])
		}
		outcomes += want[string(o)]
	}
	if outcomes != sum || len(status) != 21 || want["not_paid"] == 0 {
		t.Fatalf("outcomes %v sum to %s, status report sum %s over %d lines", want, outcomes, sum, len(status)-1)
	}
	// The checks that ended not paid are exceptions with the way forward.
	var exceptions [][]string
	for _, n := range names {
		if strings.HasPrefix(n, "exceptions-") && strings.HasSuffix(n, ".csv") {
			exceptions = readCSV(t, filepath.Join(res.Outbox, n))
		}
	}
	kinds := map[string]int{}
	for _, rec := range exceptions[1:] {
		kinds[rec[0]]++
		if rec[0] == "cancel_too_late" {
			if !strings.Contains(rec[indexOf(exceptions[0], "action")], "recover it from the payee") {
				t.Errorf("a void too late without the way forward: %q", rec)
			}
			continue
		}
		if !strings.Contains(rec[indexOf(exceptions[0], "action")], "pay again with a new check number") {
			t.Errorf("exception without the way forward: %q", rec)
		}
	}
	failed := 0
	for _, rec := range status[1:] {
		if rec[statusCol] == "failed" {
			failed++
		}
	}
	if kinds["voided"] != 1 || kinds["returned"] != failed {
		t.Fatalf("exceptions by kind %v, %d checks failed", kinds, failed)
	}
	// No full account number from the samples reaches any report.
	for _, n := range names {
		b, _ := os.ReadFile(filepath.Join(res.Outbox, n))
		if strings.Contains(string(b), "11110000") {
			t.Fatalf("%s contains a full account number", n)
		}
	}
	return text
}

func indexOf(header []string, name string) int {
	for i, h := range header {
		if h == name {
			return i
		}
	}
	return -1
}
