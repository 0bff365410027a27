package reconcile

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/batchd/batchd/internal/money"
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
	created     string
	lastChange  string
	depositedOn string
}

var statusHeader = []string{"batch", "file", "line", "check_id", "number", "label", "name", "account",
	"amount", "status", "created", "last_status_change", "deposited_on"}

var exceptionsHeader = []string{"kind", "check_id", "batch", "file", "line", "label", "number", "amount",
	"status", "detail", "action"}

// statusLines picks the rows of the status report: created in the window,
// or not final, or looked at in this run; in batch and line order.
func (m *matcher) statusLines(w Window, loc *time.Location) []statusLine {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]statusLine, 0, len(m.records))
	for k, rec := range m.records {
		if !w.Contains(rec.serviceDate()) && rec.final() && !m.checked[k] {
			continue
		}
		out = append(out, statusLine{
			batch: k.Batch, file: m.files[k.Batch], line: k.Line, checkID: rec.checkID, number: rec.number,
			label: rec.label, name: rec.name, account: rec.account, amount: rec.amount, status: rec.status.String(),
			created: stamp(rec.created, loc), lastChange: stamp(rec.statusSeen, loc), depositedOn: rec.depositDate(loc),
		})
	}
	slices.SortFunc(out, func(a, b statusLine) int {
		return cmp.Or(cmp.Compare(a.batch, b.batch), cmp.Compare(a.line, b.line))
	})
	return out
}

func stamp(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.In(loc).Format(time.DateTime)
}

func writeStatus(path string, lines []statusLine) error {
	return report.WriteFile(path, func(w *report.Writer) error {
		if err := w.Write(statusHeader...); err != nil {
			return err
		}
		for _, l := range lines {
			err := w.Write(strconv.FormatUint(l.batch, 10), l.file, strconv.FormatUint(uint64(l.line), 10),
				l.checkID, l.number, l.label, l.name, l.account, l.amount.String(), l.status,
				l.created, l.lastChange, l.depositedOn)
			if err != nil {
				return err
			}
		}
		return nil
	})
}

func writeExceptions(path string, excs []*exception) error {
	return report.WriteFile(path, func(w *report.Writer) error {
		if err := w.Write(exceptionsHeader...); err != nil {
			return err
		}
		for _, e := range excs {
			batch, line, amount := "", "", ""
			if e.hasRow {
				batch = strconv.FormatUint(e.key.Batch, 10)
				line = strconv.FormatUint(uint64(e.key.Line), 10)
			}
			if e.kind != KindIncomplete {
				amount = e.amount.String()
			}
			if err := w.Write(e.kind, e.checkID, batch, e.file, line, e.label, e.number, amount,
				string(e.status), e.detail, e.action); err != nil {
				return err
			}
		}
		return nil
	})
}

// Report names: the kind and the run date.
func reportName(kind string, d Date) string { return kind + "-" + d.String() + ".csv" }

var (
	reportFile = regexp.MustCompile(`^(status|settlement|exceptions)-(\d{4}-\d{2}-\d{2})\.csv$`)
	reportTemp = regexp.MustCompile(`^\.(status|settlement|exceptions)-\d{4}-\d{2}-\d{2}\.csv\..*\.tmp$`)
)

// prune deletes local reports dated more than keepDays before today, and
// temporary files a killed run left behind a day ago or more. Other files
// are never touched.
func prune(dir string, today Date, keepDays int, now time.Time) (int, error) {
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
		old := false
		if m := reportFile.FindStringSubmatch(e.Name()); m != nil {
			d, err := ParseDate(m[2])
			old = err == nil && d.Before(oldest)
		} else if reportTemp.MatchString(e.Name()) {
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
