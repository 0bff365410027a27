package jobs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/reconcile"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/submit"
	"github.com/batchd/batchd/internal/webhook"
)

// Reconcile runs one reconcile over window (nil: the default window, from
// the oldest check not final, capped at reconcile.lookback_days, to today)
// and delivers the reports to the outbox when SFTP is configured. With
// webhooks on, a run over the default window reads only what the pushed
// events cannot vouch for; a window named here is always listed in full.
func (e *Env) Reconcile(ctx context.Context, window *reconcile.Window) (*reconcile.Summary, error) {
	c := e.Cfg
	opts := reconcile.Options{
		ReportsDir: filepath.Join(e.ReportsDir(), "daily"), Location: c.Location(), Now: e.now,
		LookbackDays: c.Reconcile.LookbackDays, StuckAfterBusinessDays: c.Reconcile.StuckAfterBusinessDays,
		ExceptionDays: c.Reconcile.ExceptionDays, KeepDays: c.Reconcile.KeepDays, Retry: e.retryPolicy(), Logger: e.Log, Formats: ReportFormats(c),
		Webhooks: c.Webhook.Enabled(), FullWalkEvery: time.Duration(c.Reconcile.FullWalkDays) * 24 * time.Hour,
		Steps: kindsOf(e).steps,
	}
	opts.Events = ledgerEvents{e.DB}
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
	// The zero window lets the Runner pick its default one, and with it,
	// when webhooks are on, to read less than the whole list.
	var w reconcile.Window
	switch {
	case window != nil:
		w = *window
	case mark != nil:
		// After a restore, the window reaches back to the snapshot's
		// date (within the lookback), so that the checks made for rows
		// the snapshot does not have show up as unknown. Only a full
		// walk finds them: the events they raised went with the
		// ledger the restore replaced.
		dw, err := reconcile.DefaultWindow(e.DB, e.now(), c.Location(), c.Reconcile.LookbackDays)
		if err != nil {
			return nil, err
		}
		from := reconcile.DateOf(mark.SnapshotAt.UTC()).AddDays(-1)
		floor := reconcile.DateOf(e.now().In(c.Location())).AddDays(-c.Reconcile.LookbackDays)
		if from.Before(floor) {
			from = floor
		}
		if from.Before(dw.From) {
			dw.From = from
		}
		w = dw
	}
	sum, err := r.Run(ctx, w)
	if sum != nil && len(sum.FinalBatches) > 0 && !errors.Is(err, payment.ErrLedger) {
		// The ledger recorded these final statuses whether or not the
		// run went on to fail: the receipts show them now, as the next
		// run will not see them change again.
		names, rerr := submit.RedeliverResults(context.WithoutCancel(ctx), e.DB, sum.FinalBatches, e.resultsDir(), opts.Outbox, opts.Formats)
		if len(names) > 0 {
			e.Log.Info("results reports written again with the checks' final statuses", "reports", strings.Join(names, "; "))
		}
		err = errors.Join(err, rerr)
	}
	if err == nil && mark != nil && coversRestore(sum.Window, mark) {
		if cerr := e.DB.ClearRestored(); cerr != nil {
			return sum, cerr
		}
		e.Log.Info("the restored mark is cleared: this reconcile covered the snapshot's date to the restore", "snapshot_at", mark.SnapshotAt, "window", sum.Window.String())
	}
	return sum, err
}

// CallsLine words how a reconcile read the service, what that cost and
// the fewest requests its plan could take, for the daemon's log line and
// the command's output: "API calls 3 (minimum 3), fetch: 3 rows not
// final; fetching each by id takes 3 requests".
func CallsLine(sum *reconcile.Summary) string {
	return fmt.Sprintf("API calls %d (minimum %d), %s: %s", sum.Calls, sum.MinCalls, sum.Plan, sum.PlanReason)
}

// coversRestore reports whether a reconcile over w saw every check that
// may have been made between the snapshot and the restore.
func coversRestore(w reconcile.Window, m *state.RestoreMark) bool {
	return !reconcile.DateOf(m.SnapshotAt.UTC()).Before(w.From) && !w.To.Before(reconcile.DateOf(m.RestoredAt.UTC()))
}

// ledgerEvents gives reconcile the ledger's events of checks no row owned.
// Events of funding sources no row owns are onboarding's business, not
// checks created outside batchd.
type ledgerEvents struct{ db state.EventLedger }

func (l ledgerEvents) UnknownEvents(since time.Time) ([]reconcile.UnknownEvent, error) {
	recs, err := l.db.UnknownEvents(since)
	if err != nil {
		return nil, err
	}
	var out []reconcile.UnknownEvent
	for _, r := range recs {
		if r.Kind != webhook.KindCheck || r.CheckID == "" {
			continue
		}
		at := r.At
		if at.IsZero() {
			at = r.Received
		}
		out = append(out, reconcile.UnknownEvent{CheckID: r.CheckID, Name: r.Name, Status: payment.ParseStatus(r.Status), At: at})
	}
	return out, nil
}
