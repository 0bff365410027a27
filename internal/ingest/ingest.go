// Package ingest is the pickup job: it takes payment files from the SFTP
// inbox, validates every row, and records each accepted file as a batch in
// the ledger, exactly once, whatever instant the process is killed at.
//
// The protocol, per file:
//
//  1. Wait until the file is stable (size and modification time unchanged
//     for StableFor, measured on batchd's own clock so the server's clock
//     does not matter), or until "<name>.done" exists; a run waits at most
//     MaxWait, looking again at least StableFor/4 (and 250 ms) apart. A
//     file that stays empty goes to the failed folder as such (step 4's
//     note); one still changing is left for a later run. Entries that are
//     not regular files (links, folders, devices...) are never read.
//  2. Claim it: rename it (and its marker) from the inbox into this
//     instance's claim folder, <Claim>/<Instance>/, with a rename that
//     never replaces, so that of several batchd processes on one inbox
//     exactly one takes it. The claimed file's modification time is set to
//     now: a claim untouched for ClaimTimeout belongs to a dead instance
//     and is taken back the same way, by a rename into this instance's
//     folder. Files left in this instance's own folder by a run that
//     stopped are resumed first, then stale claims, then the inbox.
//  3. Download it to the spool under a temporary name, fsync, rename, and
//     hash it (SHA-256).
//  4. Content already accepted is not ingested again: the file goes to
//     the failed folder with a note naming the earlier file. The one
//     exception is the crash case: the same name and content whose batch was
//     committed but whose move never happened is simply archived.
//  5. Parse and validate while loading rows into the ledger in chunks; the
//     batch becomes visible to submit only when committed.
//  6. The fence: rename the file into <claim folder>/.commit/, which
//     succeeds only while this instance still holds the claim, and which
//     no other instance ever takes from. Then choose the name the file
//     will have in archive/YYYY-MM-DD/ (or failed/), one no report in the
//     outbox bears (names.go), and upload the rejects report, if any,
//     under it. Only then commit (or record the rejection), record where
//     the file goes, and move it there (to failed/ with <name>.error.txt).
//
// batchd never deletes a finance team's file, and a name clash in archive
// or failed gets a suffix, never an overwrite. One file's trouble stays
// with that file: see Run.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/retry"
)

// Remote is what the job needs of the SFTP server. *remote.Client has it.
type Remote interface {
	List(ctx context.Context, dir string) ([]remote.FileInfo, error)
	Download(ctx context.Context, remotePath, localDir string) (local, sha256hex string, size int64, err error)
	Upload(ctx context.Context, dir, name string, r io.Reader) error
	// Rename never replaces: a missing from matches fs.ErrNotExist, an
	// existing to fs.ErrExist (see remote.Client.Rename).
	Rename(ctx context.Context, from, to string) error
	Touch(ctx context.Context, p string, t time.Time) error
	MkdirAll(ctx context.Context, dir string) error
	// Sweep removes the temporary files failed uploads left in dir,
	// untouched since before (see remote.Client.Sweep).
	Sweep(ctx context.Context, dir string, before time.Time) ([]string, error)
}

var _ Remote = (*remote.Client)(nil)

// Policies for files with invalid rows (ingest.on_invalid).
const (
	RejectFile = "reject_file" // nothing of the file is submitted
	SkipRows   = "skip_rows"   // valid rows go on; invalid ones are reported
)

// Options configures the job; the fields mirror the sftp and ingest
// sections of the configuration.
type Options struct {
	Inbox, Archive, Failed, Outbox string

	Pattern       string        // path.Match patterns of file names, comma-separated (default DefaultPattern; see MatchName)
	StableFor     time.Duration // quiet time before a file is read (default 30s)
	MaxWait       time.Duration // how long one run waits for files to settle, whatever their state (default 2×StableFor, and at least StableFor plus one look)
	DoneMarker    bool          // read a file only once <name>.done exists
	OnInvalid     string        // RejectFile (default) or SkipRows
	IgnoreColumns []string
	MaxFileBytes  int64 // larger files go to failed unread (0 = no limit)
	TestMode      bool  // accept the sandbox's fixture routing number

	// Delimiter separates the cells of a payment file (ingest.delimiter):
	// ",", ";" or "\t"; "" is ",".
	Delimiter string
	// Sheet names the sheet of an XLSX file to read (ingest.sheet); ""
	// reads the first.
	Sheet string

	// Claim is the folder holding each instance's claim folder,
	// <Claim>/<Instance>/ (default <Inbox>/.batchd, or <Inbox>/batchd-claims
	// with NoDotNames). It must be on the inbox's file system (claims are
	// renames) and hold nothing else.
	Claim string
	// SubmitRate (api.rate, rows a second) and SubmitTimeout
	// (schedule.submit_timeout) tell how many submit runs a payment
	// file's rows take: an accepted file that needs more than one is
	// warned of (slowFileNote). Zero: no warning.
	SubmitRate    float64
	SubmitTimeout time.Duration

	// NoDotNames: the server refuses names starting with a dot
	// (sftp.temp_upload is not dot), so no folder batchd creates there
	// has one (claimnames.go).
	NoDotNames bool
	// Instance names this instance's claim folder: the ledger's id
	// (state.DB.Instance). Default: db's Instance().
	Instance string
	// ClaimTimeout is how long another instance's claim may stay
	// untouched before this one takes the file back (default 1h).
	ClaimTimeout time.Duration

	// SweepDirs are the folders batchd uploads to besides the outbox and
	// the failed folder (sftp.backups); each run starts by removing from
	// all of them the temporary files of uploads that failed (see
	// remote.Client.Sweep) and have been untouched for SweepAge (default
	// 1h: an upload under way keeps its file's time recent).
	SweepDirs []string
	SweepAge  time.Duration

	Location   *time.Location // the run date for authorization_date and archive folders
	SpoolDir   string         // local downloads
	ReportsDir string         // local copies of rejects reports
	// ReportFormats are the formats of the rejects report (report.formats;
	// none: CSV alone).
	ReportFormats []report.Format

	Now    func() time.Time
	Logger *slog.Logger

	// OnOutcome, if set, is called with each file's Outcome as soon as it
	// is settled during Run, in the order Run returns them, so that
	// progress (metrics, a UI) moves while a long run goes on rather than
	// only at its end. It is called on Run's goroutine and must not block
	// for long; it must not call back into the Job.
	OnOutcome func(Outcome)

	// Payees is the payee bank-detail check (off when its KeyDir is "").
	Payees Payees

	// Routing checks each payment row's routing number against the
	// service's bank directory (bankinfo.Banks.Refusal); nil checks
	// nothing. A reason refuses the row, as any invalid row is
	// (ingest.on_invalid); an error refuses nothing: the rest of the file goes
	// on unchecked, and the log says so (RoutingCheck).
	Routing func(ctx context.Context, routing string) (why string, err error)

	// Lines are the applied kinds this batchd applies, by kind (the
	// registration, jobs.LineKinds: each kind's rule is passed in because
	// ingest cannot import jobs). A file of an applied kind missing here
	// is an error of the run, and stays where it is.
	Lines map[payment.BatchKind]LineKind
	// Kinds pins the kind of the files whose names match a pattern
	// (ingest.kinds); other files are told by their header.
	Kinds map[string]payment.BatchKind
}

// Outcome says what happened to one file in one run; `batchd ingest`
// prints one line per Outcome.
type Outcome struct {
	File     string
	Rows     int
	Valid    int
	Rejected int
	// Outcome is what became of the file (see Result): settled
	// (archived or failed), left for a later run (Waiting), left alone as
	// not a regular file (Ignored: not a failure of the run), or skipped
	// for an error (Failed, see Run).
	Outcome Result
	Batch   uint64
	// Kind is what the file holds, told by its header once it was read
	// (payments until then); a funding-source or verification file's
	// Detail names it: "… -> /archive/…/links.csv: funding-sources batch 7".
	Kind payment.BatchKind
	// Detail starts with where the file has been, step by step, ending
	// where it is now ("/inbox/pay.csv -> /inbox/.batchd/3fa9c2/pay.csv ->
	// ..."), followed by ": " and the reason or note, if any.
	Detail  string
	Claim   string // where the file was read from, in this instance's claim folder
	MovedTo string // where it was archived or failed to
}

// Ledger is what ingest needs of the ledger (state.Ledger has it all):
// files by content, so that a content is ingested once; the batches, for
// an outcome's kind, a rejection to finish, and the outbox names that
// batches still waiting for their results report hold; and the instance
// id that names this instance's claim folder; and the checks of batches
// it lost.
type Ledger interface {
	payment.FileLedger
	// BeginSourceBatch starts a funding-source or verification file's
	// batch (funding.Ledger).
	BeginSourceBatch(m payment.FileMeta) (funding.BatchLoader, error)
	Batch(id uint64) (*payment.Batch, error)
	Batches() ([]payment.Batch, error)
	Instance() string
	// LostChecks lists the checks reconcile recorded for batches the
	// ledger lost (lost.go), which a payment file must not pay again.
	LostChecks() ([]payment.LostCheck, error)
}

// Job is the pickup job. It remembers, between runs, what it has seen of
// each file so that a file is read only once it has stopped changing.
type Job struct {
	db   Ledger
	opts Options
	log  *slog.Logger

	mu   sync.Mutex
	seen map[string]observation

	// sleep waits between looks at the inbox (retry.Sleep: a real wait;
	// tests also move their clock by d).
	sleep func(ctx context.Context, d time.Duration) error
}

type observation struct {
	size  int64
	mtime time.Time
	since time.Time // on batchd's clock
}

// New returns a pickup job over db.
func New(db Ledger, opts Options) *Job {
	if opts.Pattern == "" {
		opts.Pattern = DefaultPattern
	}
	if opts.StableFor <= 0 {
		opts.StableFor = 30 * time.Second
	}
	if opts.MaxWait <= 0 {
		// A file first seen by a run needs StableFor and then one more
		// look (at least the gap apart) to be read by that run: twice a
		// short StableFor would be too short for it.
		opts.MaxWait = max(2*opts.StableFor, opts.StableFor+lookGap(opts.StableFor))
	}
	if opts.OnInvalid == "" {
		opts.OnInvalid = RejectFile
	}
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Claim == "" && opts.Inbox != "" {
		opts.Claim = defaultClaim(opts.Inbox, opts.NoDotNames)
	}
	if opts.Instance == "" && db != nil {
		opts.Instance = db.Instance()
	}
	if opts.ClaimTimeout <= 0 {
		opts.ClaimTimeout = time.Hour
	}
	if opts.SweepAge <= 0 {
		opts.SweepAge = time.Hour
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Job{db: db, opts: opts, log: log, seen: map[string]observation{}, sleep: retry.Sleep}
}

// Run performs one pickup cycle: first the files this instance claimed in
// a run that stopped, then stale claims of other instances, then the
// inbox. It waits up to MaxWait for inbox files that are still changing,
// sleeping between looks, and always ends: those still changing after
// that are left for the next run (Outcome "waiting"). A file that stayed
// empty for StableFor goes to the failed folder (Outcome "empty"). An
// entry that is not a regular file is reported once per run (Outcome
// "ignored") and left where it is, unread; that fails nothing. A file
// another batchd claims first is not this run's: it is logged, with no
// Outcome.
//
// One file's trouble stays with that file: a file that cannot be claimed,
// read, moved or reported gets Outcome "error", is logged at error level
// and left where it is (the inbox, or this instance's claim folder, where
// the next run resumes it), and the run goes on with the other files. It
// then ends with a *FilesFailed error naming them. A failure that would
// fail every file stops the run at once, with the outcomes so far: the
// ledger's (payment.ErrLedger), a connection lost for good
// (remote.Unreachable), or ctx ending.
func (j *Job) Run(ctx context.Context, rem Remote) ([]Outcome, error) {
	if err := j.clearSpool(); err != nil {
		return nil, err
	}
	if err := j.prepareClaims(ctx, rem); err != nil {
		return nil, err
	}
	j.sweep(ctx, rem)
	var (
		out    []Outcome
		failed FilesFailed
	)
	// fileErr takes note of one file's failure; it reports whether the
	// run must stop.
	fileErr := func(name string, err error) bool {
		if stopsRun(ctx, err) {
			return true
		}
		failed.Files = append(failed.Files, FileFailure{File: name, Err: err})
		detail := ""
		if len(out) > 0 && out[len(out)-1].File == name {
			detail = out[len(out)-1].Detail
		}
		j.log.Error("file skipped for this run; the other files go on", "file", name, "detail", detail, "err", err)
		return false
	}
	stop := func(err error) ([]Outcome, error) {
		if ferr := failed.orNil(out); ferr != nil {
			err = errors.Join(err, ferr)
		}
		return out, err
	}
	own, ignored, err := j.ownClaims(ctx, rem)
	if err != nil {
		return nil, err
	}
	for _, o := range ignored {
		j.record(&out, o)
	}
	for _, h := range append(own, j.staleClaims(ctx, rem)...) {
		if err := j.settle(ctx, rem, h, &out); err != nil && fileErr(h.name, err) {
			return stop(err)
		}
	}

	if err := j.pickUp(ctx, rem, &out, fileErr); err != nil {
		return stop(err)
	}
	return out, failed.orNil(out)
}

// minLookGap is the least time between two looks at the inbox, whatever
// ingest.stable_for is: a run never lists the inbox in a tight loop.
const minLookGap = 250 * time.Millisecond

// pace is how a run looks at the inbox: at least gap apart, at most looks
// times, and sleeping at most MaxWait in all. The bounds hold whatever the
// clock or the listings say, so a run always ends.
func (j *Job) pace() (gap time.Duration, looks int) {
	gap = lookGap(j.opts.StableFor)
	return gap, int(j.opts.MaxWait/gap) + 2
}

// lookGap is the least time between two looks at the inbox.
func lookGap(stableFor time.Duration) time.Duration { return max(stableFor/4, minLookGap) }

// pickUp claims and settles the inbox's files as they become ready,
// looking again, with a sleep of at least the gap between looks, while
// some are still changing, for at most MaxWait. Entries that are not
// regular files are reported once and left alone. fileErr takes note of
// one file's failure and reports whether the run must stop; pickUp then
// returns that error.
func (j *Job) pickUp(ctx context.Context, rem Remote, out *[]Outcome, fileErr func(string, error) bool) error {
	gap, maxLooks := j.pace()
	deadline := j.opts.Now().Add(j.opts.MaxWait)
	budget := j.opts.MaxWait  // real time left to sleep
	done := map[string]bool{} // settled, or reported, in this run
	for look := 1; ; look++ {
		s, err := j.scan(ctx, rem, done)
		if err != nil {
			return err
		}
		for _, f := range s.ignored {
			done[f.Name] = true
			j.ignore(out, f)
		}
		for _, f := range s.ready {
			done[f.Name] = true
			if err := j.take(ctx, rem, f, out); err != nil && fileErr(f.Name, err) {
				return err
			}
		}
		if len(s.waiting) == 0 {
			return nil
		}
		if look < maxLooks && len(s.ready) > 0 {
			continue // handling files took time; look again before waiting
		}
		d, ok := j.wait(s.waiting, deadline, budget, gap)
		if look >= maxLooks || !ok {
			for _, f := range s.waiting {
				j.record(out, Outcome{File: f.Name, Outcome: Waiting, Detail: j.waitReason(f)})
			}
			return nil
		}
		if err := j.sleep(ctx, d); err != nil {
			return err
		}
		budget -= d
	}
}

// wait says how long to sleep before the next look: until the first
// waiting file may be ready, but at least gap and at most what is left of
// the budget. ok is false when none can be ready by the deadline, or the
// budget cannot pay for one more gap: the run then ends.
func (j *Job) wait(waiting []remote.FileInfo, deadline time.Time, budget, gap time.Duration) (time.Duration, bool) {
	now := j.opts.Now()
	next := j.nextReady(waiting)
	if budget < gap || !now.Before(deadline) || next.After(deadline) {
		return 0, false
	}
	return min(max(next.Sub(now), gap), budget), true
}

// take claims one ready inbox file and settles it.
func (j *Job) take(ctx context.Context, rem Remote, f remote.FileInfo, out *[]Outcome) error {
	h, o, err := j.claim(ctx, rem, f)
	if o.Outcome != "" {
		j.record(out, o)
	}
	if err != nil || h == nil {
		return err
	}
	return j.settle(ctx, rem, h, out)
}

// record adds o to the run's outcomes and tells Options.OnOutcome.
func (j *Job) record(out *[]Outcome, o Outcome) {
	*out = append(*out, o)
	if j.opts.OnOutcome != nil {
		j.opts.OnOutcome(o)
	}
}

// stopsRun reports whether a file's failure must stop the whole run: it
// would fail every other file too.
func stopsRun(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, payment.ErrLedger) || remote.Unreachable(err)
}

// FilesFailed is the error of a run in which some files failed and the
// others were handled. Each failed file has Outcome "error" and stays
// where its line says.
type FilesFailed struct {
	Files   []FileFailure
	Handled int // the files of the run settled otherwise (not failed, not waiting)
}

// FileFailure is one file's failure.
type FileFailure struct {
	File string
	Err  error
}

func (e *FilesFailed) Error() string {
	var b strings.Builder
	n := len(e.Files)
	fmt.Fprintf(&b, "%d of %d files failed (the others were handled): ", n, n+e.Handled)
	for i, f := range e.Files {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.File + ": " + f.Err.Error())
	}
	return b.String()
}

// Unwrap returns every file's error, so that errors.Is and SourceOf see
// them.
func (e *FilesFailed) Unwrap() []error {
	out := make([]error, len(e.Files))
	for i, f := range e.Files {
		out[i] = f.Err
	}
	return out
}

// Names lists the files that failed.
func (e *FilesFailed) Names() []string {
	out := make([]string, len(e.Files))
	for i, f := range e.Files {
		out[i] = f.File
	}
	return out
}

// orNil returns e, counting the run's other outcomes, or nil if no file
// failed.
func (e *FilesFailed) orNil(out []Outcome) error {
	if len(e.Files) == 0 {
		return nil
	}
	e.Handled = 0
	for _, o := range out {
		if o.Outcome.Settled() {
			e.Handled++
		}
	}
	return e
}

// sweep removes what failed uploads left in the folders batchd uploads to
// (only its own temporary names; see remote.Client.Sweep). A server that
// refuses deletes keeps them: that is logged, and tried again next run.
func (j *Job) sweep(ctx context.Context, rem Remote) {
	before := j.opts.Now().Add(-j.opts.SweepAge)
	seen := map[string]bool{}
	for _, dir := range append([]string{j.opts.Outbox, j.opts.Failed}, j.opts.SweepDirs...) {
		if dir == "" || seen[path.Clean(dir)] {
			continue
		}
		seen[path.Clean(dir)] = true
		removed, err := rem.Sweep(ctx, dir, before)
		if len(removed) > 0 {
			j.log.Info("removed temporary files left by failed uploads", "dir", dir, "files", removed)
		}
		if err != nil {
			j.log.Warn("cannot remove temporary files left by failed uploads; the next run tries again", "dir", dir, "err", err)
		}
	}
}

// clearSpool removes what a killed run left in the spool. Runs never
// overlap (the ledger's lock allows one process, and the scheduler one run
// of a job), and the inbox still holds every file not yet settled, so
// nothing there is needed.
func (j *Job) clearSpool() error {
	entries, err := os.ReadDir(j.opts.SpoolDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("spool %s: %w", j.opts.SpoolDir, err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			if err := os.Remove(filepath.Join(j.opts.SpoolDir, e.Name())); err != nil {
				return fmt.Errorf("spool %s: %w", j.opts.SpoolDir, err)
			}
		}
	}
	return nil
}

// look is what one listing of the inbox shows.
type look struct {
	ready   []remote.FileInfo // stable (or marked done): to be claimed now, empty or not
	waiting []remote.FileInfo // still changing, or not marked done yet
	ignored []remote.FileInfo // not regular files: never followed or read
}

// scan lists the inbox and sorts its entries, but those in done, into
// ready, waiting and ignored. A file is ready once its size and time have
// been unchanged for StableFor on batchd's clock, even at 0 bytes: an
// empty file is then failed as such rather than waited for for ever.
func (j *Job) scan(ctx context.Context, rem Remote, done map[string]bool) (look, error) {
	list, err := rem.List(ctx, j.opts.Inbox)
	if err != nil {
		return look{}, fmt.Errorf("list inbox %s: %w", j.opts.Inbox, err)
	}
	markers := map[string]bool{}
	for _, f := range list {
		if strings.HasSuffix(f.Name, ".done") {
			markers[strings.TrimSuffix(f.Name, ".done")] = true
		}
	}
	now := j.opts.Now()
	j.mu.Lock()
	defer j.mu.Unlock()
	var l look
	present := map[string]bool{}
	for _, f := range list {
		if done[f.Name] || j.quiet(f) {
			continue
		}
		if !f.Regular() {
			l.ignored = append(l.ignored, f)
			continue
		}
		if !j.candidate(f) {
			continue
		}
		present[f.Name] = true
		o, ok := j.seen[f.Name]
		if !ok || o.size != f.Size || !o.mtime.Equal(f.ModTime) {
			o = observation{size: f.Size, mtime: f.ModTime, since: now}
			j.seen[f.Name] = o
		}
		stable := now.Sub(o.since) >= j.opts.StableFor
		if j.opts.DoneMarker {
			stable = markers[f.Name]
		}
		if stable {
			l.ready = append(l.ready, f)
		} else {
			l.waiting = append(l.waiting, f)
		}
	}
	for name := range j.seen {
		if !present[name] && !done[name] {
			delete(j.seen, name) // gone from the inbox: forget it
		}
	}
	sort.Slice(l.ready, func(a, b int) bool { return l.ready[a].Name < l.ready[b].Name })
	return l, nil
}

// quiet reports whether an inbox entry is left alone without a word:
// hidden names (batchd's claim folder among them), .done markers, and the
// folders batchd itself uses when they lie inside the inbox.
func (j *Job) quiet(f remote.FileInfo) bool {
	if strings.HasPrefix(f.Name, ".") || strings.HasSuffix(f.Name, ".done") {
		return true
	}
	if !f.IsDir {
		return false
	}
	p := path.Join(j.opts.Inbox, f.Name)
	for _, d := range []string{j.opts.Claim, j.opts.Archive, j.opts.Failed, j.opts.Outbox} {
		if d != "" && (path.Clean(d) == p || strings.HasPrefix(path.Clean(d), p+"/")) {
			return true
		}
	}
	return false
}

// candidate reports whether a listed entry is a payment file to consider:
// a regular file (never a link, folder, device, socket or pipe) whose name
// matches the pattern.
func (j *Job) candidate(f remote.FileInfo) bool {
	if !f.Regular() || f.IsDir || strings.HasPrefix(f.Name, ".") || strings.HasSuffix(f.Name, ".done") {
		return false
	}
	return MatchName(j.opts.Pattern, f.Name)
}

// ignore reports an inbox entry that is not a regular file: it is left
// where it is, neither followed nor read, and named once per run.
func (j *Job) ignore(out *[]Outcome, f remote.FileInfo) {
	at := path.Join(j.opts.Inbox, f.Name)
	j.log.Warn("inbox entry is not a regular file: left there, not followed or read", "file", f.Name, "at", at, "kind", f.Kind())
	j.record(out, Outcome{File: f.Name, Outcome: Ignored, Detail: at + " (left there): " + notRegularNote(f.Kind())})
}

// notRegularNote says why an entry of the given kind is not read, and
// what to do instead.
func notRegularNote(kind string) string {
	why := "it is a " + kind + ", not a regular file; batchd reads only regular files, and never follows a link, so that nothing outside the inbox can be paid or quoted. "
	switch kind {
	case "symbolic link":
		return why + "Upload the file itself (a copy, not a link), or remove the link."
	case "folder":
		return why + "Put payment files directly in the inbox, or move the folder out of it."
	default:
		return why + "Remove it from the inbox."
	}
}

func (j *Job) nextReady(waiting []remote.FileInfo) time.Time {
	j.mu.Lock()
	defer j.mu.Unlock()
	var next time.Time
	for _, f := range waiting {
		t := j.seen[f.Name].since.Add(j.opts.StableFor)
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	if j.opts.DoneMarker || next.IsZero() {
		// A marker can appear at any time; look again soon.
		next = j.opts.Now().Add(j.opts.StableFor / 4)
	}
	return next
}

func (j *Job) waitReason(f remote.FileInfo) string {
	where := path.Join(j.opts.Inbox, f.Name) + " (left there): "
	switch {
	case j.opts.DoneMarker:
		return where + "waiting for " + f.Name + ".done"
	case f.Size == 0:
		return where + "empty so far; it goes to " + j.opts.Failed + " if it stays empty for " + j.opts.StableFor.String() + ", and is read once it has content and has been unchanged that long"
	default:
		return where + "still arriving: it changed within the last " + j.opts.StableFor.String() + "; it is read once unchanged that long, by a later run"
	}
}
