package onboard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/inflight"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/reconcile"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/rowrun"
)

// Defaults for the zero values of Options.
const (
	DefaultResolveAfter           = 2 * time.Minute
	DefaultMaxAttempts            = 10
	DefaultStuckAfterBusinessDays = 5
	// DefaultConcurrency is the ceiling of a Runner's own in-flight limit
	// when Options.Limit is nil.
	DefaultConcurrency = 8
)

// Options configures a Runner.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// Retry governs what the service did not act on (a create answered
	// 429 or 503, a read that failed). Retry.MaxAttempts (default 10) also
	// bounds the sends of one row in one run, across resends after lookups.
	Retry retry.Policy
	// ResolveAfter is how long after a lost answer a row in doubt waits
	// before it is looked up (default 2m): a source just created may take
	// a moment to show in the customer's list, and "not there" must not be
	// read too early.
	ResolveAfter time.Duration
	// Sleep waits d while rows in doubt are not yet due; nil means
	// retry.Sleep. Tests advance their clock instead.
	Sleep func(ctx context.Context, d time.Duration) error
	// Location is the zone of "today" for Reconcile's report and its
	// business days (schedule.timezone); nil means UTC.
	Location *time.Location

	// StuckAfterBusinessDays flags a source still pending after this many
	// whole business days since its creation (default 5).
	StuckAfterBusinessDays int
	// Calendar counts business days; nil means the Federal Reserve's,
	// the calendar ACH settles by.
	Calendar *reconcile.Calendar
	// ReportsDir keeps the local copy of Reconcile's report; empty means
	// no report is written.
	ReportsDir string
	// Reports receives Reconcile's report after it is written locally; the
	// zero Destination keeps it local only.
	Reports report.Destination
	// Formats are the formats of Reconcile's report; none means CSV alone.
	Formats []report.Format

	// Limit is the adaptive in-flight limit a row's send takes a slot of
	// before it goes in flight: the daemon's, which submit shares. Nil
	// means a limit of its own with a ceiling of DefaultConcurrency.
	Limit *inflight.Limit
}

// ErrIncomplete is wrapped by Run's error when the run ended, not
// interrupted, with work it could not do. The next run picks it up.
var ErrIncomplete = errors.New("onboarding left work undone")

// Summary counts what one Run did.
type Summary struct {
	Customers    int // customers created
	Created      int // funding sources created (or found after a lost answer)
	Verified     int // verification rows completed
	Rejected     int // rows the service refused
	Initiated    int // micro-deposit verifications initiated
	BankLink     int // micro-deposit rows told to use the bank-linking flow instead
	Resent       int // rows released to be sent again after a lookup found nothing
	Recovered    int // rows found in flight when the run started
	Attempts     int // row sends (Ledger.SendSource)
	Calls        int // requests made to the service
	InDoubt      int // rows still in doubt at the end
	Pending      int // rows left pending at the end
	NotInitiated int // micro-deposit rows whose verification is still to initiate
}

// Runner sends funding-source and verification rows and follows them up,
// as one kind on the row engine (internal/rowrun): the engine owns the run
// loop, the in-flight limit, the retried send under a slot, the send-by
// gate and when a row in doubt is looked up; the Runner owns the requests
// (customer, source, verification), the lanes that keep one customer's
// rows in line, and the lookup (Resolver). One Runner serves one job at a
// time: Run and Reconcile must not overlap (the daemon's scheduler
// serialises jobs).
type Runner struct {
	led  Ledger
	svc  *counted
	opts Options
	log  *slog.Logger

	run *runState // the run under way
}

// Ledger is what onboarding needs of the ledger (state.Ledger has it):
// the funding-source rows, and the batches, to learn the customer of
// every row ever recorded (not only of rows still open, which would
// create a customer twice for one email) and to name a batch's file in
// the funding-sources report.
type Ledger interface {
	funding.Ledger
	Batch(id uint64) (*payment.Batch, error)
	Batches() ([]payment.Batch, error)
}

// New returns a Runner over a ledger and the service.
func New(led Ledger, svc funding.Service, opts Options) *Runner {
	if opts.ResolveAfter <= 0 {
		opts.ResolveAfter = DefaultResolveAfter
	}
	if opts.Retry.MaxAttempts <= 0 {
		opts.Retry.MaxAttempts = DefaultMaxAttempts
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	if opts.StuckAfterBusinessDays <= 0 {
		opts.StuckAfterBusinessDays = DefaultStuckAfterBusinessDays
	}
	if opts.Calendar == nil {
		opts.Calendar = reconcile.FederalReserveCalendar()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Limit == nil {
		opts.Limit = inflight.New(inflight.Options{Ceiling: DefaultConcurrency, Now: opts.Now})
	}
	return &Runner{led: led, svc: &counted{Service: svc}, opts: opts, log: log}
}

// engine is a row engine for one run, on the Runner's options.
func (r *Runner) engine() *rowrun.Engine {
	return rowrun.New(rowrun.Options{Noun: "funding-source row", Now: r.opts.Now, Sleep: r.opts.Sleep,
		Log: r.log, Retry: r.opts.Retry, Limit: r.opts.Limit, ResolveAfter: r.opts.ResolveAfter})
}

// Run sends every pending row, after looking up the rows in doubt that
// are due, until none is pending and every row in doubt has been looked
// up, or ctx is cancelled. Cancelling ctx is a graceful stop: no new row
// starts, a request already out finishes (bounded by the client's timeout)
// or its row falls into doubt, and Run returns ctx's error. A refused key
// (payment.ErrKeyRefused) or a ledger failure (payment.ErrLedger) stops
// the run at once with that error. A run that ends otherwise with work
// left returns an error wrapping ErrIncomplete.
func (r *Runner) Run(ctx context.Context) (Summary, error) {
	r.run = newRunState(r.engine())
	calls := r.svc.n.Load()
	err := r.loadCustomers()
	if err == nil {
		err = rowrun.Run(ctx, r.run.Engine, rowrun.Kind[*funding.Row]{Recover: r.led.RecoverSourcesInFlight,
			Open: r.led.OpenSourceRows, Resolve: r.resolveDue, SendPending: r.sendPending})
	}
	if err == nil {
		err = r.initiateLeft(ctx)
	}
	if err == nil {
		err = ctx.Err()
	}
	sum, err := r.finish(err)
	sum.Calls = int(r.svc.n.Load() - calls)
	return sum, err
}

// finish counts what is left and says so when the run ended with work
// undone.
func (r *Runner) finish(err error) (Summary, error) {
	st := r.run
	sum := st.summary()
	sum.Recovered = st.Recovered()
	cerr := r.led.OpenSourceRows(func(row *funding.Row) (bool, error) {
		switch row.State {
		case payment.InDoubt, payment.InFlight:
			sum.InDoubt++
		default:
			sum.Pending++
		}
		return true, nil
	})
	if cerr == nil {
		cerr = r.led.TrackedSourceRows(func(row *funding.Row) (bool, error) {
			if awaitingInitiation(row) {
				sum.NotInitiated++
			}
			return true, nil
		})
	}
	if cerr != nil {
		return sum, errors.Join(st.Outcome(err, nil, ""), fmt.Errorf("count open rows: %w", cerr))
	}
	left := ""
	if sum.Pending > 0 || sum.InDoubt > 0 || sum.NotInitiated > 0 {
		left = fmt.Sprintf("%d funding-source rows left pending and %d in doubt after their attempts, %d micro-deposit verifications not initiated; the next onboarding run continues",
			sum.Pending, sum.InDoubt, sum.NotInitiated)
	}
	return sum, st.Outcome(err, ErrIncomplete, left)
}
