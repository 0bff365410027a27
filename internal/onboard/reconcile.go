package onboard

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/reconcile"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/rowrun"
)

// SourcesTable is the layout of funding-sources-YYYY-MM-DD.csv (and
// .xlsx): every source that was still moving (Pending) when the run began,
// what it is now, and what a person should do about it.
var SourcesTable = report.Table{Sheet: "funding sources", Columns: report.Columns(
	"kind", "batch:int", "file", "line:int", "user_id", "funding_source_id",
	"method", "previous_status", "status", "created:date", "business_days:int", "account",
	"detail", "action",
)}

// The kinds of line of the sources report.
const (
	LineTracked    = "tracked"    // still pending, within the expected time
	LineChanged    = "changed"    // its status changed in this run
	LineStuck      = "stuck"      // pending for StuckAfterBusinessDays or more: an exception
	LineMissing    = "missing"    // the service does not know it: an exception
	LineUnreadable = "unreadable" // it could not be read in this run
)

// SourcesReportName is the report's name for a run date; report.PathAs
// gives the XLSX copy's.
func SourcesReportName(d reconcile.Date) string { return "funding-sources-" + d.String() + ".csv" }

// ReconcileSummary is what one Reconcile did.
type ReconcileSummary struct {
	RunDate    reconcile.Date
	Read       int // sources read at the service
	Changed    int // status changes recorded in the ledger
	Stuck      int // sources still pending after StuckAfterBusinessDays
	Missing    int // sources the service does not know
	Unreadable int // sources that could not be read
	Calls      int // requests made to the service
	Reports    []string
}

// sourceLine is one line of the sources report.
type sourceLine struct {
	kind    string
	row     *funding.Row
	prev    funding.Status
	status  funding.Status
	created time.Time
	days    int
	detail  string
	action  string
	hasDays bool
}

// Reconcile reads every tracked (Pending) source at the service, records
// the statuses that changed (the customer verified, or verification
// failed), flags the sources pending too long, and writes and delivers the
// day's funding-sources report. It only reads at the service.
//
// A source that cannot be read is reported, and makes Reconcile return an
// error after the report is delivered; a refused key or a ledger failure
// returns at once.
func (r *Runner) Reconcile(ctx context.Context, now time.Time) (ReconcileSummary, error) {
	calls := r.svc.n.Load()
	sum, err := r.reconcile(ctx, now)
	sum.Calls = int(r.svc.n.Load() - calls)
	return sum, err
}

func (r *Runner) reconcile(ctx context.Context, now time.Time) (ReconcileSummary, error) {
	today := reconcile.DateOf(now.In(r.opts.Location))
	sum := ReconcileSummary{RunDate: today}
	var rows []*funding.Row
	if err := r.led.TrackedSourceRows(func(row *funding.Row) (bool, error) {
		rows = append(rows, row)
		return true, nil
	}); err != nil {
		return sum, fmt.Errorf("reconcile funding sources: walk tracked rows: %w", err)
	}
	lines := make([]*sourceLine, 0, len(rows))
	var obs []funding.Observation
	var lastErr error
	for _, row := range rows {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		l := &sourceLine{row: row, prev: row.Status, status: row.Status}
		lines = append(lines, l)
		var src *funding.Source
		err := rowrun.Read(ctx, r.opts.Retry, func(ctx context.Context) (err error) {
			src, err = r.svc.Source(ctx, row.SourceID)
			return err
		})
		switch {
		case errors.Is(err, payment.ErrKeyRefused):
			return sum, fmt.Errorf("reconcile funding sources: %w", err)
		case errors.Is(err, payment.ErrRefused):
			sum.Missing++
			l.kind, l.detail = LineMissing, payment.ServiceMessage(err)
			l.action = "check the source at the service; to link the account again, send a new funding-source row"
			continue
		case err != nil:
			if ctx.Err() != nil {
				return sum, ctx.Err()
			}
			sum.Unreadable++
			lastErr = err
			l.kind, l.detail, l.action = LineUnreadable, err.Error(), "none: the next reconcile reads it again"
			continue
		}
		sum.Read++
		switch {
		case src.Status == row.Status:
		case !src.Status.Known():
			l.detail = fmt.Sprintf("the service says %q, a status batchd does not know; kept as %s", string(src.Status), row.Status)
		default:
			obs = append(obs, funding.Observation{Key: row.Key, Status: src.Status})
		}
	}
	if len(obs) > 0 {
		changed, err := r.led.ObserveSources(obs, now)
		if err != nil {
			return sum, fmt.Errorf("reconcile funding sources: record %d statuses: %w", len(obs), err)
		}
		sum.Changed = len(changed)
		for _, l := range lines {
			if row, ok := changed[l.row.Key]; ok {
				l.row, l.status, l.kind = row, row.Status, LineChanged
				l.action = changedAction(row)
			}
		}
	}
	r.classify(lines, today, &sum)
	if r.opts.ReportsDir != "" {
		paths, err := r.writeSources(ctx, today, lines)
		sum.Reports = paths
		if err != nil {
			return sum, fmt.Errorf("reconcile funding sources: %w", err)
		}
	}
	r.log.Info("funding sources reconciled", "read", sum.Read, "changed", sum.Changed, "stuck", sum.Stuck,
		"missing", sum.Missing, "unreadable", sum.Unreadable)
	if sum.Unreadable > 0 {
		return sum, fmt.Errorf("reconcile funding sources: %d of %d could not be read; the last error: %w", sum.Unreadable, len(rows), lastErr)
	}
	return sum, nil
}

// classify tells the lines still pending apart: stuck once the source
// has been pending StuckAfterBusinessDays whole business days since it was
// created, tracked before.
func (r *Runner) classify(lines []*sourceLine, today reconcile.Date, sum *ReconcileSummary) {
	for _, l := range lines {
		l.created = createdAt(l.row)
		if !l.created.IsZero() {
			l.days = r.opts.Calendar.BusinessDaysBetween(reconcile.DateOf(l.created.In(r.opts.Location)), today)
			l.hasDays = true
		}
		if l.kind != "" || !l.status.Tracked() {
			continue
		}
		if l.hasDays && l.days >= r.opts.StuckAfterBusinessDays {
			sum.Stuck++
			l.kind, l.action = LineStuck, stuckAction(l.row)
			detail := fmt.Sprintf("%s for %d business days since it was created on %s", l.status, l.days,
				reconcile.DateOf(l.created.In(r.opts.Location)))
			if l.detail != "" {
				detail += "; " + l.detail
			}
			l.detail = detail
			continue
		}
		l.kind, l.action = LineTracked, NextStep(l.row)
		if l.action == "" {
			l.action = "none yet: wait for the customer's verification"
		}
	}
}

// createdAt is when the row's source came to be: when the row was first
// recorded submitted, else its last attempt.
func createdAt(row *funding.Row) time.Time {
	for _, s := range row.History {
		if s.State == payment.Submitted {
			return s.At
		}
	}
	return row.AttemptAt
}

// changedAction is what a status change asks of a person.
func changedAction(row *funding.Row) string {
	switch row.Status {
	case funding.StatusVerified:
		return "none: the account is verified for debits and credits"
	case funding.StatusUnverified:
		return StepUnverified
	case funding.StatusVerificationFailed:
		return StepVerificationEnded
	case funding.StatusDeleted:
		return "the source was removed at the service: to link the account again, send a new funding-source row"
	}
	return NextStep(row)
}

// stuckAction is what a source pending too long asks of a person.
func stuckAction(row *funding.Row) string {
	switch {
	case row.NextStep != "":
		return row.NextStep
	case row.Request.Method == funding.MicroDeposits && !row.Initiated.IsZero():
		return "ask the customer for the two micro-deposit amounts sent on " + row.Initiated.UTC().Format(time.DateOnly) +
			" and send a verification file, or " + StepLinkWithProvider
	case row.Request.Method == funding.MicroDeposits:
		return "micro-deposits were never sent: onboarding sends them on its next run; if it cannot, " + StepLinkWithProvider
	}
	return "check the source at the service"
}

// writeSources writes the day's sources report in every format and
// delivers each copy.
func (r *Runner) writeSources(ctx context.Context, today reconcile.Date, lines []*sourceLine) ([]string, error) {
	path := filepath.Join(r.opts.ReportsDir, SourcesReportName(today))
	paths, err := SourcesTable.Write(path, r.opts.Formats, func(rows *report.Rows) error {
		for _, l := range lines {
			var days any
			if l.hasDays {
				days = l.days
			}
			var created any
			if !l.created.IsZero() {
				created = l.created.In(r.opts.Location)
			}
			var prev any
			if l.kind == LineChanged {
				prev = string(l.prev)
			}
			if err := rows.Add(l.kind, l.row.Key.Batch, r.fileOf(l.row.Key.Batch), l.row.Key.Line, userOf(l.row),
				l.row.SourceID, string(l.row.Request.Method), prev, string(l.status), created, days,
				account(l.row), l.detail, l.action); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, p := range paths {
		errs = append(errs, r.opts.Reports.Deliver(ctx, p, filepath.Base(p)))
	}
	return paths, errors.Join(errs...)
}

// fileOf names a batch's file for a report, or "" when the batch cannot
// be read (pruned since its row was listed).
func (r *Runner) fileOf(batch uint64) string {
	b, err := r.led.Batch(batch)
	if err != nil {
		return ""
	}
	return b.File
}
