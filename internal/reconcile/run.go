package reconcile

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// Run reconciles the checks created in window w, a range of the service's
// dates (UTC); the zero Window means DefaultWindow. It updates the ledger,
// writes the day's reports to ReportsDir (replacing any of the same day),
// prunes old local reports and uploads the new ones to the Outbox.
//
// Run returns an error when the list or a check cannot be read after
// retries, when the service refuses the key (wrapping payment.ErrKeyRefused), when the
// ledger fails, or when a report cannot be written or uploaded. What the
// run changed in the ledger up to then stays, and is consistent; running
// again redoes the whole job. The Summary is filled as far as the run got.
func (r *Runner) Run(ctx context.Context, w Window) (*Summary, error) {
	o := r.opts
	now := o.Now()
	explicit := w != (Window{})
	listed, err := r.lastListing(now)
	if err != nil {
		return nil, fmt.Errorf("reconcile: %w", err)
	}
	if !explicit {
		if w, err = DefaultWindow(r.db, now, o.Location, o.LookbackDays); err != nil {
			return nil, fmt.Errorf("reconcile: %w", err)
		}
		w = sinceListing(w, listed, now, o.Location, o.LookbackDays)
	}
	if w.From.IsZero() || w.To.IsZero() || w.To.Before(w.From) {
		return nil, fmt.Errorf("reconcile: window %s is not a range of dates", w)
	}
	today := DateOf(now.In(o.Location))
	sum := &Summary{Window: w, RunDate: today}
	api := &countingAPI{API: r.api}
	defer func() { sum.Calls = api.calls() }() // on every return: a failed run's requests count too
	r.log.Info("reconcile started", "window", w.String(), "run_date", today.String())

	m, err := newMatcher(r.db, o.Now, r.log)
	if err != nil {
		return sum, fmt.Errorf("reconcile: %w", err)
	}
	m.window = w
	if r.keep > 0 {
		m.keep = r.keep
	}
	m.outcomes = newOutcomeWindow(today, o.ExceptionDays, o.Location)
	defer m.fillFinals(sum) // on every return: what the ledger recorded counts even if the run fails later
	plan, err := r.planRead(now, w, explicit, m, listed)
	if err != nil {
		return sum, fmt.Errorf("reconcile: %w", err)
	}
	wr, pr, err := r.look(ctx, api, m, w, plan, today, sum)
	if err != nil {
		r.fill(sum, m)
		return sum, fmt.Errorf("reconcile: %w", err)
	}
	sum.Confirmed, sum.StatusRows = pr.confirmed, pr.lines
	sum.MinCalls += pr.unlisted // the plan's GETs: read() counted its pages
	if o.Webhooks && o.Events != nil {
		if _, err := m.heardOf(o.Events, dayStart(w.From)); err != nil {
			return sum, fmt.Errorf("reconcile: %w", err)
		}
	}
	if err := m.findTwins(ctx); err != nil {
		return sum, fmt.Errorf("reconcile: %w", err)
	}
	excs, err := m.finish(ctx, r.opts.Steps, pr.open, wr)
	if err != nil {
		return sum, fmt.Errorf("reconcile: %w", err)
	}
	r.fill(sum, m)
	for _, e := range excs {
		switch e.kind {
		case KindUnknown:
			sum.Unknown++
		case KindLostBatch:
			sum.LostBatch++
		case KindMissing:
			sum.Missing++
		case KindMismatch:
			sum.Mismatched++
		case KindStuck:
			sum.Stuck++
		case KindInDoubt:
			sum.InDoubt++
		case KindReturned:
			sum.Returned++
		case KindVoided:
			sum.Voided++
		}
	}
	if err := r.writeReports(ctx, sum, today, pr, excs, m.steps); err != nil {
		return sum, fmt.Errorf("reconcile: %w", err)
	}
	if err := r.recordListing(sum, plan, explicit, wr.consistent, now); err != nil {
		return sum, fmt.Errorf("reconcile: %w", err)
	}
	r.log.Info("reconcile finished", "checks_seen", sum.ChecksSeen, "matched", sum.Matched,
		"status_changes", sum.StatusChanges, "unknown", sum.Unknown, "lost_batch", sum.LostBatch, "missing", sum.Missing,
		"mismatched", sum.Mismatched, "stuck", sum.Stuck, "in_doubt", sum.InDoubt,
		"returned", sum.Returned, "voided", sum.Voided,
		"pages_read", sum.PagesRead, "passes", sum.Passes, "consistent", sum.Consistent,
		"plan", sum.Plan, "calls", api.calls(), "min_calls", sum.MinCalls)
	return sum, nil
}

// look reads the service as planned (read) while the status report is
// written alongside (startPass), and returns once both are done. The walk
// is over for the pass only after recheckUnknown, which may still match a
// check to a row.
func (r *Runner) look(ctx context.Context, api API, m *matcher, w Window, plan readPlan, today Date, sum *Summary) (walkResult, passResult, error) {
	pass := r.startPass(ctx, api, m, filepath.Join(r.opts.ReportsDir, reportName("status", today)), today)
	wr, listedW, err := r.read(ctx, api, m, w, plan, sum)
	sum.ChecksSeen, sum.PagesRead, sum.Passes, sum.Consistent = wr.distinct, wr.pages, wr.passes, wr.consistent
	if err == nil {
		err = m.recheckUnknown()
	}
	if err != nil {
		pass.abort()
		return wr, passResult{}, err
	}
	m.walkOver(listedW)
	pr, err := pass.wait()
	if err != nil {
		return wr, pr, fmt.Errorf("confirm checks absent from the list and write the status report: %w", err)
	}
	r.log.Debug("status report written", "lines", pr.lines)
	return wr, pr, nil
}

// read looks at the rows as planned: the whole window when plan.why
// names a reason to, else plan.must and the cheapest mix of listing date
// ranges and fetching rows by id (cheapestRanges). It returns the walks' result and the
// ranges it listed, none when it listed nothing. sum gets the plan and
// the fewest pages it could take (MinCalls, to which Run adds the GETs
// confirm makes of rows not final outside the listed ranges).
func (r *Runner) read(ctx context.Context, api API, m *matcher, w Window, plan readPlan, sum *Summary) (walkResult, []Window, error) {
	if why := plan.why; why != "" {
		sum.Plan, sum.PlanReason = PlanFullWalk, why
		if r.opts.Webhooks {
			r.log.Info("listing the whole window despite webhooks", "reason", why)
		}
		wr, err := r.walkAndScan(ctx, api, m, w)
		sum.MinCalls = fullWalkPages(wr.total, r.opts.PageSize)
		return wr, []Window{w}, err
	}
	days, err := m.dayCounts(ctx)
	if err != nil {
		return walkResult{}, nil, err
	}
	in, outside := splitWindow(days, w)
	p := cheapestRanges(mustList(in, plan.must), r.opts.PageSize, outside)
	sum.MinCalls, sum.PlanReason = p.pages, p.String()
	why := "webhooks keep the ledger current"
	if !plan.must.From.IsZero() {
		why = "the dates before " + plan.must.From.String() + " were listed after their last check was made"
		sum.PlanReason = "the dates since the last listing are listed for checks made elsewhere; " + sum.PlanReason
	}
	if len(p.ranges) == 0 {
		sum.Plan = PlanFetch
		r.log.Info(why+": fetching the rows not final by id", "rows", p.open, "estimate", sum.PlanReason)
		return walkResult{consistent: true}, nil, nil
	}
	sum.Plan = PlanWalk
	r.log.Info(why+": listing the cheapest date ranges", "ranges", len(p.ranges), "estimate", sum.PlanReason)
	wr, err := r.walkRanges(ctx, api, m, p.ranges)
	return wr, p.ranges, err
}

// walkRanges lists each range in turn. The ranges are disjoint, so their
// results add up without counting a check twice; the whole is consistent
// only when every range's walk is.
func (r *Runner) walkRanges(ctx context.Context, api API, m *matcher, ranges []Window) (walkResult, error) {
	all := walkResult{consistent: true}
	for _, w := range ranges {
		wr, err := r.walk(ctx, api, m, w)
		all.distinct += wr.distinct
		all.total += wr.total
		all.pages += wr.pages
		all.passes += wr.passes
		all.consistent = all.consistent && wr.consistent
		if err != nil {
			return all, fmt.Errorf("list %s: %w", w, err)
		}
	}
	return all, nil
}

// walkAndScan walks the whole window. The ledger rows the reports need
// are read by the pass that writes the status report alongside the walk
// (stream.go), so nothing else scans the ledger and no row is held.
func (r *Runner) walkAndScan(ctx context.Context, api API, m *matcher, w Window) (walkResult, error) {
	return r.walk(ctx, api, m, w)
}

// walk lists the checks created in w, matching each page as it comes.
func (r *Runner) walk(ctx context.Context, api API, m *matcher, w Window) (walkResult, error) {
	params := payment.CheckQuery{Limit: r.opts.PageSize, Sort: "date", Direction: "ASC",
		FromDate: w.From.String(), ToDate: w.To.String()}
	return newWalker(api, params, r.opts, r.log, m.process).walk(ctx)
}

// fill copies the matcher's counters into the Summary.
func (r *Runner) fill(sum *Summary, m *matcher) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sum.Matched, sum.Resolved, sum.StatusChanges = m.checked.len(), len(m.resolved), m.statusChanges
	for _, e := range m.excs {
		if e.kind == KindMissing {
			sum.Matched-- // looked at, but not matched
		}
	}
}

// writeReports writes the settlement and exceptions reports locally, in
// every format, beside the status report the pass wrote (pr), prunes old
// reports and uploads the new ones. sum.Reports lists the paths format by
// format: status, settlement, exceptions as CSV, then as XLSX. The
// settlement was summed from the very lines of the status report. Each
// file is renamed into place only when whole.
func (r *Runner) writeReports(ctx context.Context, sum *Summary, today Date, pr passResult, excs []*exception, steps []*StepReport) error {
	dir := r.opts.ReportsDir
	status := pr.status
	settlement, err := writeSettlementFile(filepath.Join(dir, reportName("settlement", today)), r.opts.Formats, pr.settlement)
	if err != nil {
		return err
	}
	exceptions, err := writeExceptions(filepath.Join(dir, reportName("exceptions", today)), r.opts.Formats, excs)
	if err != nil {
		return err
	}
	var paths []string
	for i := range status { // one path per format in each, in the same order
		paths = append(paths, status[i], settlement[i], exceptions[i])
	}
	for _, in := range steps { // after the three, so that a ledger with none reports as before
		ip, err := in.Table.Write(filepath.Join(dir, reportName(in.Name, today)), r.opts.Formats, func(rows *report.Rows) error {
			for _, row := range in.Rows {
				if err := rows.Add(row...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("write the %s report: %w", in.Name, err)
		}
		paths = append(paths, ip...)
		sum.Steps = append(sum.Steps, StepSummary{Name: in.Name, Counts: in.Counts, Words: in.Words})
	}
	sum.Reports = paths
	var names []string
	for _, in := range steps {
		names = append(names, in.Name)
	}
	if n, err := prune(dir, today, r.opts.KeepDays, r.opts.Now(), names...); err != nil {
		r.log.Warn("old reports could not all be deleted", "error", err)
	} else if n > 0 {
		r.log.Info("old reports deleted", "files", n, "keep_days", r.opts.KeepDays)
	}
	var errs []error
	for _, p := range paths {
		errs = append(errs, r.opts.Outbox.Deliver(ctx, p, filepath.Base(p)))
	}
	return errors.Join(errs...)
}
