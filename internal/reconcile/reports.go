package reconcile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// statusLine is one line of the status report.
type statusLine struct {
	batch       uint64
	file        string
	line        uint32
	checkID     string
	number      string
	label       string
	name        string
	account     string
	amount      money.Cents
	status      string
	outcome     payment.Outcome // what the row's status says of the money (record.outcome)
	created     time.Time       // in the report's zone; zero when unknown
	lastChange  time.Time       // in the report's zone; zero when unknown
	depositedOn Date            // the zero Date unless deposited
	bank        string          // the payee's bank's name, as the bank directory gave it (internal/bankinfo); "" when unknown
}

// StatusTable is the layout of status-YYYY-MM-DD.csv (and .xlsx). outcome
// (last, so that the columns before keep their places) is what the line's
// money is, as the settlement sums it: paid, on_its_way, not_paid, or
// cancelled (voided on a cancel file's request); bank (after it) the
// payee's bank's name where the bank directory gave one.
var StatusTable = report.Table{Sheet: "status", Columns: report.Columns(
	"batch:int", "file", "line:int", "check_id", "number", "label",
	"name", "account", "amount:money", "status", "created:datetime", "last_status_change:datetime",
	"deposited_on:date", "outcome", "bank",
)}

// ExceptionsTable is the layout of exceptions-YYYY-MM-DD.csv (and .xlsx).
var ExceptionsTable = report.Table{Sheet: "exceptions", Columns: report.Columns(
	"kind", "check_id", "batch:int", "file", "line:int", "label",
	"number", "amount:money", "status", "detail", "action",
)}

// statusLineOf is the status report's line of rec, times shown in loc.
func statusLineOf(rec *record, file string, loc *time.Location) statusLine {
	return statusLine{
		batch: rec.key.Batch, file: file, line: rec.key.Line, checkID: rec.checkID, number: rec.number,
		label: rec.label, name: rec.name, account: rec.account, amount: rec.amount, status: rec.status.String(), outcome: rec.outcome(),
		created: local(rec.created, loc), lastChange: local(rec.statusSeen, loc), depositedOn: rec.depositDay(loc),
	}
}

// local is t in loc, or the zero time (a blank cell) for the zero time.
func local(t time.Time, loc *time.Location) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.In(loc)
}

// cell is a Date as a report cell: the day, or nil (blank) for the zero
// Date.
func (d Date) cell() any {
	if d.IsZero() {
		return nil
	}
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
}

// writeStatus writes the status report with the lines each hands it, in
// order, and returns its paths and how many lines it has.
func writeStatus(path string, formats []report.Format, each func(func(statusLine) error) error) ([]string, int, error) {
	n := 0
	paths, err := StatusTable.Write(path, formats, func(r *report.Rows) error {
		return each(func(l statusLine) error {
			n++
			return r.Add(l.batch, l.file, l.line, l.checkID, l.number, l.label, l.name, l.account,
				l.amount, l.status, l.created, l.lastChange, l.depositedOn.cell(), string(l.outcome), l.bank)
		})
	})
	return paths, n, err
}

func writeExceptions(path string, formats []report.Format, excs []*exception) ([]string, error) {
	return ExceptionsTable.Write(path, formats, func(r *report.Rows) error {
		for _, e := range excs {
			var batch, line, amount any // blank unless known
			if e.hasRow {
				batch, line = e.key.Batch, e.key.Line
			}
			if e.kind != KindIncomplete {
				amount = e.amount
			}
			if err := r.Add(e.kind, e.checkID, batch, e.file, line, e.label, e.number, amount,
				string(e.status), e.detail, e.action); err != nil {
				return err
			}
		}
		return nil
	})
}

// Report names: the kind and the run date, as the CSV's; report.PathAs
// gives the XLSX copy's (status-2026-11-22.xlsx).
func reportName(kind string, d Date) string { return kind + "-" + d.String() + ".csv" }

var (
	reportFile = regexp.MustCompile(`^([a-z][a-z-]*)-(\d{4}-\d{2}-\d{2})\.(csv|xlsx)$`)
	reportTemp = regexp.MustCompile(`^\.([a-z][a-z-]*)-\d{4}-\d{2}-\d{2}\.(csv|xlsx)\..*\.tmp$`)
)

// dailyReports name the daily reports prune may delete: reconcile's own
// and onboarding's funding-sources; each Step's report name is added.
var dailyReports = []string{"status", "settlement", "exceptions", "funding-sources"}

// prune deletes local reports (CSV and XLSX copies) named in dailyReports
// or steps, dated more than keepDays before today, and temporary files
// a killed run left behind a day ago or more. Other files are never
// touched.
func prune(dir string, today Date, keepDays int, now time.Time, steps ...string) (int, error) {
	if keepDays < 0 {
		return 0, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("prune reports in %s: %w", dir, err)
	}
	oldest := today.AddDays(-keepDays)
	n := 0
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		ours := func(name string) bool { return slices.Contains(dailyReports, name) || slices.Contains(steps, name) }
		old := false
		if m := reportFile.FindStringSubmatch(e.Name()); m != nil && ours(m[1]) {
			d, err := ParseDate(m[2])
			old = err == nil && d.Before(oldest)
		} else if m := reportTemp.FindStringSubmatch(e.Name()); m != nil && ours(m[1]) {
			info, err := e.Info()
			old = err == nil && now.Sub(info.ModTime()) > 24*time.Hour
		}
		if !old {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if len(errs) > 0 {
		return n, fmt.Errorf("prune reports in %s: %w", dir, errors.Join(errs...))
	}
	return n, nil
}
