package reconcile

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// Steps: what a kind of file adds to reconcile (payment.Kinds; registered
// in jobs/kinds.go). A kind of money coming in (payment links,
// internal/paymentlink) takes its checks out of the listed ones no row
// owns, so that none is reported a stranger to void, and writes its own
// daily report, whose totals are kept apart from the payments going out
// in the status and settlement reports. A kind that acts on checks
// (cancels, edits) raises the exceptions a person must act on, such as a
// void that came too late, in the daily exceptions report. The checks a
// step sees are those the run listed (the window's dates).

// Step is one kind's part of a reconcile run.
type Step interface {
	// Reconcile takes out of run.Unknown the checks that are the kind's,
	// and says what it reports.
	Reconcile(ctx context.Context, run StepRun) (*StepReport, error)
}

// StepRun is what a Step is given of the run.
type StepRun struct {
	// Unknown are the listed checks no row owns, by id: a Step deletes
	// those it takes.
	Unknown map[string]*payment.Check
	// Recent reports whether an outcome recorded at t is still listed in
	// the exceptions report (reconcile.exception_days, as for checks
	// that ended not paid).
	Recent func(t time.Time) bool
}

// StepReport is what one Step reports in one run.
type StepReport struct {
	// Name names the Step's daily report: "links" is links-YYYY-MM-DD.csv.
	Name  string
	Table report.Table
	// Rows are the report's rows, in Table's column order; none writes
	// no report, so that a ledger that never saw the kind reports as
	// before.
	Rows       [][]any
	Exceptions []Exception
	// Counts are the report's lines by status; Words, the counts in one
	// line for the log and the command's output ("payment links: 15
	// open, 5 paid").
	Counts map[string]int
	Words  string
}

// Exception is an exception a Step raises on a check: Kind names it in
// the exceptions report (after reconcile's own kinds), File is the file
// the check's line came from.
type Exception struct {
	Kind, File, Detail, Action string
	Check                      *payment.Check
}

// StepSummary is what a run's Summary keeps of one Step's report.
type StepSummary struct {
	Name   string
	Counts map[string]int
	Words  string
}

// runSteps runs each Step on the unknown checks, and returns the reports
// to write and every Step's exceptions. A Step may ask the service (one
// request per link not yet paid): it works on a copy of the unknown
// checks, so that the matcher's lock is not held across its requests, and
// the checks it took are then taken out of the matcher's.
func (m *matcher) runSteps(ctx context.Context, steps []Step) ([]*StepReport, []*exception, error) {
	m.mu.Lock()
	unknown := maps.Clone(m.unknown)
	m.mu.Unlock()
	reps, excs, err := m.stepReports(ctx, steps, unknown)
	m.mu.Lock()
	defer m.mu.Unlock()
	maps.DeleteFunc(m.unknown, func(id string, _ *payment.Check) bool {
		_, left := unknown[id]
		return !left
	})
	return reps, excs, err
}

// stepReports runs each Step on unknown.
func (m *matcher) stepReports(ctx context.Context, steps []Step, unknown map[string]*payment.Check) ([]*StepReport, []*exception, error) {
	var reps []*StepReport
	var excs []*exception
	for _, s := range steps {
		rep, err := s.Reconcile(ctx, StepRun{Unknown: unknown, Recent: m.outcomes.holds})
		if err != nil {
			return nil, nil, fmt.Errorf("reconcile step: %w", err)
		}
		if rep == nil {
			continue
		}
		for _, x := range rep.Exceptions {
			e := checkException(x.Kind, x.Check)
			e.file, e.detail, e.action = x.File, x.Detail, x.Action
			excs = append(excs, e)
		}
		if len(rep.Rows) > 0 {
			reps = append(reps, rep)
		}
	}
	return reps, excs, nil
}
