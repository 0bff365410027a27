package reconcile

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/retry"
)

// API is what reconcile needs of the service: reads only (ListChecks and
// GetCheck). It is the domain's Service; tests wrap the sandbox's client to
// change the list mid-walk.
type API = payment.Service

// Defaults for the zero values of Options.
const (
	DefaultLookbackDays           = 60
	DefaultStuckAfterBusinessDays = 5
	DefaultKeepDays               = 90
	DefaultConcurrency            = 4
	DefaultPageSize               = 100 // the service's maximum (spec section 8)
	DefaultMaxPasses              = 4
	DefaultMaxAttempts            = 8
	DefaultFullWalkEvery          = 7 * 24 * time.Hour
)

// Options configures a Runner. ReportsDir is required.
type Options struct {
	// ReportsDir keeps the local copy of every report.
	ReportsDir string
	// Outbox receives each report after it is written locally; the zero
	// Destination keeps the reports local only.
	Outbox report.Destination
	// Formats are the formats each report is written in (report.formats);
	// none means CSV alone.
	Formats []report.Format
	// Location is the zone of "today", of the run date in report names and
	// of every time shown in a report (schedule.timezone); nil means UTC.
	Location *time.Location
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// LookbackDays caps how far back the default window reaches
	// (reconcile.lookback_days).
	LookbackDays int
	// StuckAfterBusinessDays flags a check not final after this many whole
	// business days (reconcile.stuck_after_business_days).
	StuckAfterBusinessDays int
	// ExceptionDays is how many daily exceptions reports list a check
	// that ended not paid (returned, voided), from the day batchd first
	// recorded it so (reconcile.exception_days); 0 means
	// DefaultExceptionDays.
	ExceptionDays int
	// KeepDays is how long local reports are kept; older ones are deleted
	// from ReportsDir (never from the Outbox). Negative keeps them forever.
	KeepDays int
	// Calendar counts business days; nil means FederalReserveCalendar().
	Calendar *Calendar
	// Concurrency is how many list pages or check fetches may be in flight
	// at once. Every request still waits on the client's shared limiter.
	Concurrency int
	// PageSize is the list's limit parameter, 1 to 100.
	PageSize int
	// MaxPasses bounds the passes over the list (see the package doc).
	MaxPasses int
	// Retry spaces and bounds the tries of one request that fails with a
	// retryable error; Retry.MaxAttempts defaults to DefaultMaxAttempts.
	Retry retry.Policy
	// Logger receives the run's progress; nil discards.
	Logger *slog.Logger
	// Steps are the kinds of money coming in (payment links), each
	// taking its checks out of those no row owns (step.go).
	Steps []Step

	// Webhooks says the service pushes check status changes to batchd's
	// receiver, which records them in the ledger. A run over the default
	// window then reads only what the pushes cannot vouch for (see the
	// package doc, "With webhooks"); false reads everything every run.
	Webhooks bool
	// FullWalkEvery is how often a run still lists the whole window, to
	// find what a dropped delivery, an unrecorded check or a list that
	// once left a check out hid (reconcile.full_walk_days); 0 means
	// DefaultFullWalkEvery.
	FullWalkEvery time.Duration
	// Events lists the webhook events about checks no row owns (jobs
	// gives the ledger's); nil means none. With Webhooks and no source
	// every run lists the whole window, since nothing else would show a
	// check created outside batchd.
	Events EventSource
}

// Runner runs reconcile against one ledger and one API. Runs must not
// overlap (the daemon's scheduler serialises jobs); a Runner holds no state
// between runs.
type Runner struct {
	db   payment.Ledger
	api  API
	opts Options
	log  *slog.Logger
	// keep bounds the records the matcher keeps for the status report's
	// pass (stream.go); 0 is freshCap. Tests lower it.
	keep int
}

// New checks opts, fills in defaults and returns a Runner.
func New(db payment.Ledger, api API, opts Options) (*Runner, error) {
	if db == nil || api == nil {
		return nil, errors.New("reconcile: a ledger and an API client are required")
	}
	if opts.ReportsDir == "" {
		return nil, errors.New("reconcile: ReportsDir is required")
	}
	if opts.PageSize < 0 || opts.PageSize > 100 {
		return nil, fmt.Errorf("reconcile: page size %d is outside 1..100", opts.PageSize)
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&opts.LookbackDays, DefaultLookbackDays)
	def(&opts.StuckAfterBusinessDays, DefaultStuckAfterBusinessDays)
	def(&opts.Concurrency, DefaultConcurrency)
	def(&opts.PageSize, DefaultPageSize)
	def(&opts.MaxPasses, DefaultMaxPasses)
	def(&opts.Retry.MaxAttempts, DefaultMaxAttempts)
	def(&opts.ExceptionDays, DefaultExceptionDays)
	if opts.KeepDays == 0 {
		opts.KeepDays = DefaultKeepDays
	}
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Calendar == nil {
		opts.Calendar = FederalReserveCalendar()
	}
	if opts.FullWalkEvery <= 0 {
		opts.FullWalkEvery = DefaultFullWalkEvery
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{db: db, api: api, opts: opts, log: log}, nil
}

// Summary is what one run did, for the command line and for metrics.
type Summary struct {
	Window        Window
	RunDate       Date // the date in the report names
	ChecksSeen    int  // distinct checks listed
	Matched       int  // checks matched to a ledger row (listed or fetched)
	Resolved      int  // rows in doubt resolved by a listed check
	StatusChanges int  // status changes recorded in the ledger
	Unknown       int  // checks batchd did not create
	LostBatch     int  // checks batchd made for a batch its ledger lost (KindLostBatch)
	Missing       int  // expected checks the service does not have (404)
	Mismatched    int  // checks whose amount, number, label or status disagrees with the row
	Stuck         int  // checks not final after the configured business days
	InDoubt       int  // rows still in doubt
	Returned      int  // checks the service failed, reported for their days (outcomes.go)
	Voided        int  // checks voided or deleted, by batchd or elsewhere, reported for their days
	// Steps are the reports of money coming in (Options.Steps) that
	// had lines: each one's name and its lines by status.
	Steps []StepSummary
	// Final counts the rows whose check this run saw reach each final
	// status. FinalBatches names the batches whose results report was
	// delivered before one of their checks reached its final status (in
	// this run or since the report): the caller writes each again.
	Final        map[payment.Status]int
	FinalBatches []uint64
	Confirmed    int  // expected checks absent from the list and fetched by GET
	PagesRead    int  // list pages fetched, re-reads included
	Passes       int  // passes over the list
	Consistent   bool // the walk proved it saw the whole list, or the run needed no walk
	StatusRows   int  // lines of the status report
	Reports      []string
	// Plan is how the run read the service: PlanFullWalk, PlanWalk or
	// PlanFetch; PlanReason says why (a full walk's cause, or the
	// estimate that chose between listing and fetching).
	Plan       string
	PlanReason string
	// Calls counts the requests sent to the service, list pages and GETs,
	// every retry included: what the service's rate limit and quota see.
	Calls int
	// MinCalls is the fewest requests the run's plan could take by the
	// ledger's counts: a page per PageSize rows batchd holds on each
	// listed range (at least one), and a GET per row not final on a date
	// not listed. Checks created elsewhere, re-reads and retries make
	// Calls exceed it; so do rows the list lacks, which are fetched by id.
	// For a full walk it is one pass over the list at the largest total
	// the service reported (at least one page), plus a GET per row not
	// final outside the window: all a walk that reads every check needs.
	MinCalls int
}

// DefaultWindow is the window a scheduled run lists: from the service date
// of the oldest check that is not final, or of the oldest create attempt
// of a row in doubt, but no earlier than lookbackDays before today and no
// later than yesterday; to today. Today is taken in loc and, because the
// service dates checks in UTC, also in UTC: the later of the two, so that
// no check created "today" by either clock is left out.
func DefaultWindow(db payment.Ledger, now time.Time, loc *time.Location, lookbackDays int) (Window, error) {
	today := DateOf(now.In(loc))
	if u := DateOf(now.UTC()); today.Before(u) {
		today = u
	}
	from := DateOf(now.In(loc)).AddDays(-1)
	batches, err := db.Batches()
	if err != nil {
		return Window{}, fmt.Errorf("default window: %w", err)
	}
	if from, err = oldestOpen(db, batches, from); err != nil {
		return Window{}, fmt.Errorf("default window: %w", err)
	}
	if floor := DateOf(now.In(loc)).AddDays(-lookbackDays); from.Before(floor) {
		from = floor
	}
	return Window{From: from, To: today}, nil
}

// oldestOpen lowers from to the service date of the oldest tracked check
// and of the oldest create attempt of a row in doubt.
//
// Tracked rows come in batch order, and no check is older than its batch,
// so the walk stops at the first batch ingested after the oldest date found
// so far: usually after the first batch's rows, instead of decoding every
// tracked row. A day of slack allows for the
// service's clock running behind batchd's.
func oldestOpen(db payment.Ledger, batches []payment.Batch, from Date) (Date, error) {
	earliest := make(map[uint64]Date, len(batches)) // the earliest service date a check of the batch can carry
	for _, b := range batches {
		earliest[b.ID] = DateOf(b.Created.UTC()).AddDays(-1)
	}
	err := db.TrackedRows(func(r *payment.Row) (bool, error) {
		if earliest[r.Key.Batch].Before(from) {
			if !r.CheckCreated.IsZero() && DateOf(r.CheckCreated.UTC()).Before(from) {
				from = DateOf(r.CheckCreated.UTC())
			}
			return true, nil
		}
		return false, nil // this batch and every later one is younger than from
	})
	if err != nil {
		return Date{}, err
	}
	err = rowsIn(db, batches, func(r *payment.Row) {
		if r.State == payment.InDoubt && !r.AttemptAt.IsZero() && DateOf(r.AttemptAt.UTC()).Before(from) {
			from = DateOf(r.AttemptAt.UTC())
		}
	}, payment.InDoubt)
	return from, err
}

// rowsIn calls fn for every row of the batches that count rows in one of
// the given states, so that looking for the few rows in doubt does not
// decode every pending row of a large file waiting to be submitted.
func rowsIn(db payment.Ledger, batches []payment.Batch, fn func(*payment.Row), states ...payment.RowState) error {
	for _, b := range batches {
		n := 0
		for _, s := range states {
			n += b.Counts[s]
		}
		if n == 0 || b.Status != payment.BatchReady || !b.Kind.Payments() {
			continue
		}
		err := db.Rows(b.ID, func(r *payment.Row) (bool, error) {
			fn(r)
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("read rows of batch %d: %w", b.ID, err)
		}
	}
	return nil
}
