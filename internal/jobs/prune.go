package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/onboard"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/reconcile"
	"github.com/batchd/batchd/internal/redact"
	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/state"
)

// Retention: prune removes finished batches from the ledger after writing
// each one's rows to an archive report (state.DB.Prune decides what is
// finished and removes it; this file words the report and delivers it).

// ArchiveTable is the layout of an archive report: the results report's
// columns, then where the row and its check ended and when.
var ArchiveTable = report.Table{Sheet: "archive", Columns: report.Columns(
	"file", "batch:int", "line:int", "check_id", "number", "label",
	"amount:money", "status", "risk", "fund_confirmation", "error", "name",
	"account", "row_state", "ingested:datetime", "sent:datetime",
	"check_created:datetime", "status_seen:datetime", "deposited_seen:datetime",
	"last_change:datetime",
)}

// ArchiveColumns are the archive report's column names.
var ArchiveColumns = ArchiveTable.Names()

// ArchiveName is the name of a batch's archive report in the outbox: the
// file's name, the batch (two files of the same name are two batches) and
// ".archive.csv"; its XLSX copy ends in ".archive.xlsx" (report.PathAs).
func ArchiveName(b *payment.Batch) string {
	return b.File + ".batch-" + strconv.FormatUint(b.ID, 10) + ".archive.csv"
}

// ArchiveDir is where the local copies of archive reports are kept, under
// the state directory. batchd never deletes them: they are the ledger's
// only record of a pruned batch.
func ArchiveDir(cfg *config.Config) string { return filepath.Join(cfg.StateDir, "reports", "archive") }

// SourcesArchiveTable is the layout of a funding batch's archive report:
// the file and batch, then its results report's columns.
var SourcesArchiveTable = report.Table{Sheet: "archive", Columns: append(
	report.Columns("file", "batch:int"), onboard.ResultsTable.Columns...)}

// mergePrune adds the funding batches' prune to the payment batches'.
func mergePrune(a, b state.PruneSummary) state.PruneSummary {
	a.Pruned = append(a.Pruned, b.Pruned...)
	a.Rows += b.Rows
	for k, n := range b.Kept {
		if a.Kept == nil {
			a.Kept = map[string]int{}
		}
		a.Kept[k] += n
	}
	return a
}

// PruneResult is what one prune did.
type PruneResult struct {
	// Asked is the cut-off asked for; Before is the one used: Asked, or
	// the horizon (PruneHorizon) when Asked is later.
	Asked, Before time.Time
	Summary       state.PruneSummary
	// Archives are the local archive reports written, one per pruned
	// batch: the copy in the first of report.formats (the CSV, unless
	// only xlsx is configured); any other copy is beside it, under the
	// same name with its own extension.
	Archives []string
}

// Clamped reports whether the horizon moved the cut-off.
func (r PruneResult) Clamped() bool { return r.Before.Before(r.Asked) }

// PruneHorizon is the latest cut-off prune uses: a batch last changed on
// or after it is kept, whatever was asked. Reconcile's default window
// reaches back reconcile.lookback_days from today in schedule.timezone
// and lists checks by their date at the service, in UTC. A batch whose
// last change (which is never before its checks' dates) is before the
// horizon has no check that window can list, so reconcile never meets a
// check of a pruned batch and reports it "unknown". The extra day covers
// the difference between the time zone and UTC.
func PruneHorizon(now time.Time, loc *time.Location, lookbackDays int) time.Time {
	if lookbackDays <= 0 {
		lookbackDays = reconcile.DefaultLookbackDays
	}
	y, m, d := now.In(loc).Date()
	local := time.Date(y, m, d-lookbackDays-1, 0, 0, 0, 0, loc)
	if utc := time.Date(y, m, d-lookbackDays-1, 0, 0, 0, 0, time.UTC); utc.Before(local) {
		return utc
	}
	return local
}

// StartOfDay is midnight at the start of date (YYYY-MM-DD) in loc: the
// cut-off `batchd prune --before DATE` means.
func StartOfDay(date string, loc *time.Location) (time.Time, error) {
	t, err := time.ParseInLocation(time.DateOnly, date, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a date (YYYY-MM-DD)", date)
	}
	return t, nil
}

// Prune removes the finished batches whose last change is before before
// (or the horizon, when that is earlier). Each batch's rows are first
// written to an archive report under ArchiveDir and delivered to the SFTP
// outbox when SFTP is configured; a batch whose report could not be
// written or delivered stays, and Prune stops with the error.
func Prune(ctx context.Context, db state.Retention, cfg *config.Config, log *slog.Logger, now, before time.Time) (PruneResult, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	loc := cfg.Location()
	res := PruneResult{Asked: before, Before: before}
	if h := PruneHorizon(now, loc, cfg.Reconcile.LookbackDays); h.Before(before) {
		res.Before = h
	}
	var out report.Destination
	var rem *remote.Client
	defer func() {
		if rem != nil {
			rem.Close()
		}
	}()
	dir := ArchiveDir(cfg)
	// write archives one batch: its rows (fill) in table, locally, then to
	// the outbox when SFTP is configured.
	write := func(b *payment.Batch, table report.Table, fill func(*report.Rows) error) error {
		if cfg.SFTP.Address != "" && rem == nil {
			var err error
			if rem, err = (&Env{Cfg: cfg, Log: log}).Dial(ctx); err != nil {
				return err
			}
			out = report.Destination{Outbox: rem, Dir: cfg.SFTP.Outbox}
		}
		local := filepath.Join(dir, fmt.Sprintf("batch-%06d-%s.archive.csv", b.ID, safeFileName(b.File)))
		formats := archiveFormats(ReportFormats(cfg), b)
		if !slices.Equal(formats, ReportFormats(cfg)) {
			log.Warn("archive written as CSV only: the batch has more rows than an XLSX worksheet holds",
				"batch", b.ID, "file", b.File, "rows", storedRows(b))
		}
		paths, err := table.Write(local, formats, fill)
		if err != nil {
			return err
		}
		ownLikeStateDir(cfg.StateDir, append([]string{dir}, paths...)...)
		if err := out.DeliverAll(ctx, paths, ArchiveName(b)); err != nil {
			return err
		}
		res.Archives = append(res.Archives, paths[0])
		return nil
	}
	archive := func(b *payment.Batch, rows func(func(*payment.Row) error) error) error {
		return write(b, ArchiveTable, func(w *report.Rows) error {
			return rows(func(r *payment.Row) error {
				if err := ctx.Err(); err != nil { // batchd is stopping: the batch stays
					return err
				}
				return w.Add(archiveRecord(b, r, loc)...)
			})
		})
	}
	sum, err := db.Prune(ctx, res.Before, archive)
	if err == nil {
		var ssum state.PruneSummary
		ssum, err = db.PruneSources(ctx, res.Before, func(b *payment.Batch, rows func(func(*funding.Row) error) error) error {
			return write(b, SourcesArchiveTable, func(w *report.Rows) error {
				return rows(func(r *funding.Row) error {
					if err := ctx.Err(); err != nil {
						return err
					}
					return w.Add(append([]any{b.File, b.ID}, onboard.ResultCells(r)...)...)
				})
			})
		})
		sum = mergePrune(sum, ssum)
	}
	res.Summary = sum
	for _, p := range sum.Pruned {
		log.Info("pruned batch", "batch", p.Batch.ID, "file", p.Batch.File, "rows", p.Rows,
			"last_change", p.LastChange.In(loc).Format(time.DateTime))
	}
	return res, err
}

// xlsxRowLimit is the most data rows an XLSX worksheet holds: 1,048,576
// rows, less the header.
const xlsxRowLimit = 1_048_575

// archiveFormats are the formats of a batch's archive: report.formats,
// less XLSX for a batch with more rows than a worksheet holds (the XLSX
// copy would fail, and the batch could never be pruned), and CSV when that
// leaves none.
func archiveFormats(formats []report.Format, b *payment.Batch) []report.Format {
	if storedRows(b) <= xlsxRowLimit {
		return formats
	}
	var out []report.Format
	for _, f := range formats {
		if f != report.XLSX {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		out = []report.Format{report.CSV}
	}
	return out
}

// storedRows counts the rows the ledger holds of a batch.
func storedRows(b *payment.Batch) int {
	n := 0
	for _, c := range b.Counts {
		n += c
	}
	return n
}

// Describe words a prune in one line, for the log and the command line.
func (r PruneResult) Describe(loc *time.Location) string {
	s := fmt.Sprintf("pruned %s (%s) last changed before %s", plural(len(r.Summary.Pruned), "batch", "batches"),
		plural(r.Summary.Rows, "row", "rows"), r.Before.In(loc).Format(time.DateOnly))
	if r.Clamped() {
		s += fmt.Sprintf(" (asked %s; reconcile.lookback_days keeps later ones)", r.Asked.In(loc).Format(time.DateOnly))
	}
	var kept []string
	total := 0
	for why, n := range r.Summary.Kept {
		kept = append(kept, fmt.Sprintf("%d %s", n, why))
		total += n
	}
	sort.Strings(kept)
	if total > 0 {
		s += fmt.Sprintf("; kept %d (%s)", total, strings.Join(kept, ", "))
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// archiveRecord is one row of an archive report, as typed cells.
func archiveRecord(b *payment.Batch, r *payment.Row, loc *time.Location) []any {
	status, acct := r.ReportStatus(), redact.PaymentAccount(&r.Payment)
	var ingested, sent, last time.Time
	for _, s := range r.History {
		switch {
		case ingested.IsZero() && (s.State == payment.Pending || s.State == payment.Held): // a row is loaded one or the other
			ingested = s.At
		case s.Via == payment.Send:
			sent = s.At
		}
		if s.At.After(last) {
			last = s.At
		}
	}
	return []any{b.File, b.ID, r.Key.Line, r.CheckID, r.Number, r.Label,
		r.Payment.Amount, status, r.Risk, r.FundConfirmation, r.Error, r.Payment.Name, acct, string(r.State),
		inZone(ingested, loc), inZone(sent, loc), inZone(r.CheckCreated, loc), inZone(r.StatusSeenAt, loc),
		inZone(r.DepositedSeenAt, loc), inZone(last, loc)}
}

// inZone is t in loc, as the reports show times; the zero time (a blank
// cell) stays zero.
func inZone(t time.Time, loc *time.Location) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.In(loc)
}

// safeFileName keeps a remote file name from escaping the local directory.
func safeFileName(name string) string {
	return strings.NewReplacer("/", "_", "\\", "_", "..", "_").Replace(name)
}

// ownLikeStateDir gives the archive directory and a report the owner of
// the state directory, when they differ and the process may (it runs as
// root: an administrator's `batchd prune`), so that the daemon, which
// runs as its own user, can still write there. Best effort.
func ownLikeStateDir(stateDir string, paths ...string) {
	if os.Geteuid() != 0 {
		return
	}
	st, err := os.Stat(stateDir)
	if err != nil {
		return
	}
	owner, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	for _, p := range paths {
		_ = os.Chown(p, int(owner.Uid), int(owner.Gid))
	}
}

// PruneSpec is the daemon's schedule for prune: 30 minutes after
// schedule.reconcile when that is a daily time ("M H * * *" with a single
// minute and hour, days and months as they are, or @daily/@midnight), so
// that prune runs once reconcile has recorded the day's final statuses;
// otherwise daily at 06:30, half an hour after the default reconcile. A
// reconcile late in the evening moves prune past midnight, onto the same
// days of the week.
func PruneSpec(reconcileSpec string) string {
	spec := strings.TrimSpace(reconcileSpec)
	switch spec {
	case "@daily", "@midnight":
		return "30 0 * * *"
	}
	f := strings.Fields(spec)
	if len(f) == 5 {
		minute, err1 := strconv.Atoi(f[0])
		hour, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil && minute >= 0 && minute < 60 && hour >= 0 && hour < 24 {
			at := hour*60 + minute + 30
			return fmt.Sprintf("%d %d %s", at%60, at/60%24, strings.Join(f[2:], " "))
		}
	}
	return "30 6 * * *"
}

// Prune prunes the batches older than keepDays (and than the horizon),
// for the daemon. The ledger is shared with the other jobs, so it is not
// compacted: bbolt reuses the pages it frees, and the file stops growing.
func (e *Env) Prune(ctx context.Context, keepDays int) (PruneResult, error) {
	now := e.now()
	y, m, d := now.In(e.Cfg.Location()).Date()
	before := time.Date(y, m, d-keepDays, 0, 0, 0, 0, e.Cfg.Location())
	return Prune(ctx, e.DB, e.Cfg, e.Log, now, before)
}

// Prune is the scheduled prune with retention.keep_days = keepDays.
func (s Scheduled) Prune(keepDays int) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		res, err := s.Env.Prune(ctx, keepDays)
		s.note(err, payment.SourceSFTP, payment.SourceLedger)
		s.rows()
		return res.Describe(s.Env.Cfg.Location()), err
	}
}
