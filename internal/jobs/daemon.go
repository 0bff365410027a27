package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/metrics"
	"github.com/batchd/batchd/internal/onboard"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/reconcile"
	"github.com/batchd/batchd/internal/tick"
)

// Recorder keeps the last error of each outside dependency for /healthz.
// *daemon.ErrorRecorder has it.
type Recorder interface {
	Record(source string, err error)
	Clear(source string)
}

// Scheduled adapts the jobs to the daemon: each returns the one-line
// summary the scheduler logs, updates metrics, and records its error for
// the health endpoint under the error's real source (payment.SourceOf):
// "sftp", "api", "ledger", or "batchd" for anything else.
type Scheduled struct {
	Env *Env
	// Metrics may be nil. The files and checks counters are not counted
	// here but as each file settles and each check is recorded, by the
	// Env's hooks (FileCounter as OnIngestOutcome, Metrics.ChecksCreated
	// as OnChecksCreated).
	Metrics *metrics.Metrics
	Errors  Recorder
	// OnPending is called when an ingest committed rows, so the daemon can
	// start a submit at once.
	OnPending func(ctx context.Context)
}

// Ingest is the scheduled pickup. While it runs, the rows-by-state gauge
// is refreshed every submit.progress_interval, as during a submit.
func (s Scheduled) Ingest(ctx context.Context) (string, error) {
	stop := s.refreshRows(s.Env.Cfg.Submit.ProgressInterval.Std())
	out, err := s.Env.Ingest(ctx)
	stop()
	s.note(err, payment.SourceSFTP, payment.SourceLedger)
	var accepted, rejected, rows int
	var waiting, failed []string
	for _, o := range out {
		switch {
		case o.Outcome.Accepted():
			accepted++
			rows += o.Valid
		case o.Outcome.Settled():
			rejected++
		case o.Outcome == ingest.Waiting:
			waiting = append(waiting, o.File)
		case o.Outcome == ingest.Failed:
			failed = append(failed, o.File)
		}
	}
	s.rows()
	if rows > 0 && s.OnPending != nil {
		s.OnPending(ctx)
	}
	sum := fmt.Sprintf("%d files accepted (%d rows), %d not accepted", accepted, rows, rejected)
	if len(failed) > 0 {
		// Each was skipped for this run and is tried again; the error
		// (recorded for /healthz) says why, file by file.
		sum += fmt.Sprintf(", %d failed (%s)", len(failed), strings.Join(failed, ", "))
	}
	if len(waiting) > 0 {
		sum += fmt.Sprintf(", %d still arriving (%s)", len(waiting), strings.Join(waiting, ", "))
	}
	return sum, err
}

// FileCounter counts each file in batchd_files_ingested_total or
// batchd_files_rejected_total as an ingest run settles it: give it to
// Open as Hooks.OnIngestOutcome, so that the counters move during a long
// run rather than at its end (or never, if it is cancelled). A file
// still arriving, left alone as not a regular file, or skipped for an
// error and tried again, is neither.
func FileCounter(m *metrics.Metrics) func(ingest.Outcome) {
	return func(o ingest.Outcome) {
		switch {
		case o.Outcome.Accepted():
			m.FilesIngested(1)
		case o.Outcome.Settled():
			m.FilesRejected(1)
		}
	}
}

// Submit is the scheduled submit. While it runs, the rows-by-state gauge
// is refreshed every submit.progress_interval, so that pending rows are
// seen falling during a run of hours.
func (s Scheduled) Submit(ctx context.Context) (string, error) {
	stop := s.refreshRows(s.Env.Cfg.Submit.ProgressInterval.Std())
	sum, delivered, err := s.Env.Submit(ctx)
	stop()
	s.note(err, payment.SourceAPI, payment.SourceLedger)
	s.rows()
	s.Metrics.ChecksFinal(map[payment.Status]int{payment.StatusVoid: sum.Voided}) // voided for their risk result
	line := fmt.Sprintf("created %d, rejected %d, voided %d, in doubt %d, pending %d, %d results reports",
		sum.Created, sum.Rejected, sum.Voided, sum.InDoubt, sum.Pending, len(delivered))
	if sum.Held > 0 {
		line += fmt.Sprintf(", %d held for a changed payee account (batchd release)", sum.Held)
	}
	if o := sum.Sources; o != (onboard.Summary{}) {
		line += "; funding sources: " + SourcesLine(o)
	}
	return line, err
}

// SourcesLine words an onboarding run in one line, for the log and the
// command line.
func SourcesLine(o onboard.Summary) string {
	return fmt.Sprintf("customers created %d, sources created %d, verified %d, rejected %d, micro-deposits sent %d, "+
		"bank-linking needed %d, in doubt %d, pending %d, calls %d",
		o.Customers, o.Created, o.Verified, o.Rejected, o.Initiated, o.BankLink, o.InDoubt, o.Pending, o.Calls)
}

// SourcesReconcileLine words an onboarding reconcile in one line.
func SourcesReconcileLine(o onboard.ReconcileSummary) string {
	return fmt.Sprintf("funding sources read %d, changed %d, stuck %d, missing %d, unreadable %d, calls %d",
		o.Read, o.Changed, o.Stuck, o.Missing, o.Unreadable, o.Calls)
}

// Reconcile is the scheduled reconcile over the default window.
func (s Scheduled) Reconcile(ctx context.Context) (string, error) {
	return s.ReconcileWindow(ctx, nil)
}

// ReconcileWindow is Reconcile over window (nil: the default one), for a
// run asked for through the admin API (`batchd reconcile --from --to`
// while the daemon runs).
func (s Scheduled) ReconcileWindow(ctx context.Context, window *reconcile.Window) (string, error) {
	sum, err := s.Env.Reconcile(ctx, window)
	var line string
	if sum != nil {
		line = fmt.Sprintf("window %s: %d checks seen, %d status changes, %d unknown, %d missing, %d mismatched, %d stuck, %d in doubt, %d returned, %d voided; %s",
			sum.Window, sum.ChecksSeen, sum.StatusChanges, sum.Unknown, sum.Missing, sum.Mismatched, sum.Stuck, sum.InDoubt,
			sum.Returned, sum.Voided, CallsLine(sum))
		s.Metrics.ChecksFinal(sum.Final) // what the run recorded, even if it failed later
		if sum.LostBatch > 0 {
			line += fmt.Sprintf("; %d checks of batches the ledger lost (lost_batch: real payments, not to void)", sum.LostBatch)
		}
		for _, in := range sum.Steps {
			line += "; " + in.Words
		}
		// A failed run's requests count too: they were sent.
		s.Metrics.ReconcileCalls(sum.Calls)
		s.Metrics.ReconcileMinCalls(sum.MinCalls)
	}
	if !errors.Is(err, payment.ErrLedger) && !errors.Is(err, payment.ErrKeyRefused) && ctx.Err() == nil {
		osum, oerr := s.Env.ReconcileSources(ctx)
		if osum.Read > 0 || oerr != nil {
			line += "; " + SourcesReconcileLine(osum)
		}
		err = errors.Join(err, oerr)
	}
	s.note(err, payment.SourceAPI, payment.SourceLedger)
	s.rows()
	return line, err
}

// note records a run's error under its source, or, after a run that
// worked, clears the sources the job depends on.
func (s Scheduled) note(err error, uses ...payment.Source) {
	if s.Errors == nil {
		return
	}
	if err != nil {
		s.Errors.Record(string(payment.SourceOf(err)), err)
		return
	}
	for _, src := range uses {
		s.Errors.Clear(string(src))
	}
}

// refreshRows refreshes the rows-by-state gauge every interval until the
// returned stop is called (which waits for the refresher to end).
func (s Scheduled) refreshRows(interval time.Duration) (stop func()) {
	if s.Metrics == nil || interval <= 0 {
		return func() {}
	}
	return tick.Every(interval, s.rows)
}

// rows refreshes the rows-by-state gauge from the ledger.
func (s Scheduled) rows() {
	if s.Metrics == nil {
		return
	}
	st, err := StatusOf(s.Env.DB)
	if err != nil {
		return
	}
	m := map[string]int{}
	for k, n := range st.Rows {
		m[string(k)] = n
	}
	s.Metrics.SetRows(m)
}
