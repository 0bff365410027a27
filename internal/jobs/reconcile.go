package jobs

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/batchd/batchd/internal/reconcile"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/state"
)

// Reconcile runs one reconcile over window (nil: the default window, from
// the oldest check not final, capped at reconcile.lookback_days, to today)
// and delivers the reports to the outbox when SFTP is configured.
func (e *Env) Reconcile(ctx context.Context, window *reconcile.Window) (*reconcile.Summary, error) {
	c := e.Cfg
	opts := reconcile.Options{
		ReportsDir: filepath.Join(e.ReportsDir(), "daily"), Location: c.Location(),
		LookbackDays: c.Reconcile.LookbackDays, StuckAfterBusinessDays: c.Reconcile.StuckAfterBusinessDays,
		KeepDays: c.Reconcile.KeepDays, Retry: e.retryPolicy(), Logger: e.Log, Formats: ReportFormats(c),
	}
	if c.SFTP.Address != "" {
		rem, err := e.Dial(ctx)
		if err != nil {
			return nil, fmt.Errorf("reconcile: %w", err)
		}
		defer rem.Close()
		opts.Outbox = report.Destination{Outbox: rem, Dir: c.SFTP.Outbox}
	}
	r, err := reconcile.New(e.DB, e.Service, opts)
	if err != nil {
		return nil, err
	}
	mark, err := RestoredMark(e.DB)
	if err != nil {
		return nil, err
	}
	w := window
	if w == nil {
		dw, err := reconcile.DefaultWindow(e.DB, e.now(), c.Location(), c.Reconcile.LookbackDays)
		if err != nil {
			return nil, err
		}
		// After a restore, the window reaches back to the snapshot's
		// date (within the lookback), so that the checks made for rows
		// the snapshot does not have show up as unknown.
		if mark != nil {
			from := reconcile.DateOf(mark.SnapshotAt.UTC()).AddDays(-1)
			floor := reconcile.DateOf(e.now().In(c.Location())).AddDays(-c.Reconcile.LookbackDays)
			if from.Before(floor) {
				from = floor
			}
			if from.Before(dw.From) {
				dw.From = from
			}
		}
		w = &dw
	}
	sum, err := r.Run(ctx, *w)
	if err == nil && mark != nil && coversRestore(*w, mark) {
		if cerr := e.DB.(restorable).ClearRestored(); cerr != nil {
			return sum, cerr
		}
		e.Log.Info("the restored mark is cleared: this reconcile covered the snapshot's date to the restore", "snapshot_at", mark.SnapshotAt, "window", w.String())
	}
	return sum, err
}

// coversRestore reports whether a reconcile over w saw every check that
// may have been made between the snapshot and the restore.
func coversRestore(w reconcile.Window, m *state.RestoreMark) bool {
	return !reconcile.DateOf(m.SnapshotAt.UTC()).Before(w.From) && !w.To.Before(reconcile.DateOf(m.RestoredAt.UTC()))
}
