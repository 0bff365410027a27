// Package submit sends every pending row as an eCheck, exactly once.
//
// The API has no idempotency key, so exactly-once rests on three rules:
//
//  1. A row is durably marked in flight, with the label and number its
//     check will carry, before its create request leaves (Ledger.Send).
//  2. A create whose answer was lost (a timeout, a reset, a 5xx after the
//     request was written) puts the row in doubt. A row in doubt is never
//     sent again blindly: after Options.ResolveAfter, resolve.Resolver looks
//     it up and binds the check that payment.Belongs to it; only a row that
//     a complete lookup proved has no check is sent again. A lookup that
//     keeps failing leaves the row in doubt, reported, never resent.
//  3. Rows found in flight at start (the previous process died mid-request)
//     are put in doubt before anything else happens.
//
// On a ledger shared by instances under a leader lease, the service cannot
// check a fencing token, so each create intent also carries a send-by
// deadline (payment.Row.SendBy, set by Ledger.Send). On every attempt,
// just before the request is handed to the client, a worker whose clock is
// past it sends nothing and puts the row in doubt (sendByPassed), and no
// row in doubt is looked up before its deadline plus a margin
// (resolve.Resolver.ReleasableAt): until then its create may still leave
// from an instance that lost the lead without knowing it. Run waits for
// those deadlines on its clock.
//
// And one rule for honesty: a run that cannot record what it does (a
// ledger write fails) stops at once, and a run that ends with work it could
// not do returns an error that says what is left (ErrIncomplete).
//
// Everything else, the token bucket, retries with backoff and Retry-After,
// the AIMD step-down on 429, and voiding by risk, is about using the rate
// budget fully without tripping it.
package submit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batchd/batchd/internal/inflight"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/resolve"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/rowrun"
)

// Options configures a Runner.
type Options struct {
	// Concurrency is the most creates in flight at once, and the number
	// of workers (default 4): api.concurrency, a ceiling. How many are in
	// flight is Limit's to decide.
	Concurrency int
	// Limit is the adaptive in-flight limit every create takes a slot of
	// before its row is marked in flight (internal/inflight); jobs shares
	// one that follows the rate limiter. Nil means one of the Runner's
	// own, without a rate: it grows to Concurrency within a few answers.
	// With a Limit and no Concurrency, the workers are its ceiling.
	Limit        *inflight.Limit
	ResolveAfter time.Duration // wait after a lost answer before trusting "not found" (default 2m)
	VoidOnRisk   []string      // risk results whose checks batchd voids at once (e.g. "Fail")
	// Retry governs transient failures: a create the service did not act
	// on, a page of a lookup. Retry.MaxAttempts (default 10) also bounds
	// the creates of one row in one run, across resends after lookups.
	Retry retry.Policy
	// Now is batchd's clock: the waits before a lookup and the clock the
	// resolver compares attempts with. nil means the wall clock, which only
	// a command-line run on the real date may rely on; jobs passes its
	// Env's clock, tests a clocktest clock. The resolver's lookup range does
	// not rest on it agreeing with the service's (see resolve.SkewBound).
	Now     func() time.Time
	Logger  *slog.Logger
	OnRetry func(endpoint string) // optional: counts retries for metrics
	// OnCreated, optional, is told of checks as they are recorded created
	// (or found after a lost answer), so that metrics move during a run of
	// hours rather than at its end. It must be cheap and safe for
	// concurrent use: workers call it.
	OnCreated func(n int)
	// OnSendDropped, optional, is told of creates not sent because their
	// send-by deadline had passed when their turn came (the row went in
	// doubt instead; see sendByPassed). Workers call it.
	OnSendDropped func(n int)
	// SendMargin is how long after a row's send-by deadline its lookup
	// may release it (resolve.Resolver.SendMargin); zero means
	// resolve.DefaultSendMargin.
	SendMargin time.Duration
	// BreakAfter, when positive, is the circuit breaker: once every create
	// has failed (no answer, or not processed) for this long with no
	// success in between, the run stops trying and ends with ErrOutage
	// (breaker.go). jobs sets it to twice health.failing_after.
	BreakAfter time.Duration
}

// ErrIncomplete is wrapped by Run's error when the run ended, not
// interrupted, with work it could not do: rows left pending after their
// attempts, rows still in doubt because their lookup failed, or risky
// checks not voided. The next run picks them up.
var ErrIncomplete = errors.New("submit left work undone")

// Summary counts what one run did.
type Summary struct {
	Created    int // checks created (or found after a lost answer)
	Rejected   int // rows the API refused
	Voided     int // checks voided for their risk result
	VoidFailed int // checks that should have been voided but could not be
	Resent     int // rows sent again after a lookup found no check
	InDoubt    int // rows still in doubt at the end of the run
	Pending    int // rows left pending (interrupted, or retries exhausted)
	Held       int // rows held for a changed payee account, waiting for batchd release (not a failure)
	Attempts   int // create requests sent
	Dropped    int // creates not sent: their send-by deadline had passed (the rows went in doubt)
	Recovered  int // rows found in flight at start
}

// Runner works through the ledger's pending rows.
type Runner struct {
	led      payment.Rows
	svc      payment.Service
	resolver *resolve.Resolver
	opts     Options
	log      *slog.Logger
	void     map[string]bool
	brk      *breaker
	limit    *inflight.Limit

	created, rejected, voided, voidFailed, resent, attempts, dropped atomic.Int64
	// run is why the run must stop, what it left undone, the rows it gave
	// up on and the creates per row: the state every kind keeps alike.
	run rowrun.State
}

// New returns a Runner over a ledger and the service.
func New(led payment.Rows, svc payment.Service, opts Options) *Runner {
	if opts.Concurrency <= 0 && opts.Limit != nil {
		opts.Concurrency = opts.Limit.Ceiling()
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.Limit == nil {
		opts.Limit = inflight.New(inflight.Options{Ceiling: opts.Concurrency, Now: opts.Now})
	}
	if opts.ResolveAfter <= 0 {
		opts.ResolveAfter = 2 * time.Minute
	}
	if opts.Retry.MaxAttempts <= 0 {
		opts.Retry.MaxAttempts = 10
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	void := map[string]bool{}
	for _, r := range opts.VoidOnRisk {
		void[r] = true
	}
	r := &Runner{led: led, svc: svc, opts: opts, log: log, void: void, brk: newBreaker(opts.BreakAfter, opts.Now),
		limit: opts.Limit}
	lookup := opts.Retry
	lookup.Notify = func(error, time.Duration) { r.retried("check.list") }
	r.resolver = &resolve.Resolver{Ledger: led, Service: svc, Retry: lookup, Log: log, Now: opts.Now,
		SendMargin: opts.SendMargin}
	return r
}

// Done reports rows finished so far in this run; Progress displays use it.
func (r *Runner) Done() int64 { return r.created.Load() + r.rejected.Load() }

// Run submits until no row is pending, every row in doubt has been looked
// up (waiting, on Options.Now, for ResolveAfter and for send-by deadlines
// plus the margin), or ctx is cancelled; rows whose lookup ctx's end
// forestalled stay in doubt, and a warning says so. Cancelling ctx is a graceful stop: no new create
// starts, requests already out finish (bounded by the client's timeout) or
// fall into doubt, and everything is committed before Run returns ctx's
// error. A refused key (payment.ErrKeyRefused) or a ledger failure
// (payment.ErrLedger) stops the run at once with that error. A run that
// ends otherwise with work left returns ErrIncomplete.
func (r *Runner) Run(ctx context.Context) (Summary, error) {
	var sum Summary
	n, err := r.led.RecoverInFlight()
	if err != nil {
		return sum, err
	}
	sum.Recovered = n
	if n > 0 {
		r.log.Warn("rows were in flight when the last run stopped; they will be looked up before any resend", "rows", n)
	}
	for {
		if err := r.sendPending(ctx); err != nil {
			return r.finish(sum, err)
		}
		waiting, err := r.resolveDue(ctx)
		if err != nil {
			return r.finish(sum, err)
		}
		more, err := r.hasPending()
		if err != nil {
			return r.finish(sum, err)
		}
		if more {
			continue
		}
		if waiting.rows == 0 {
			break // nothing pending, nothing left to look up
		}
		if err := r.waitUntil(ctx, waiting.next); err != nil {
			r.stoppedWaiting(waiting, err)
			return r.finish(sum, err)
		}
	}
	if err := r.sweepVoids(ctx); err != nil {
		return r.finish(sum, err)
	}
	return r.finish(sum, ctx.Err())
}

// finish fills the summary from the counters and the ledger, and says
// what is left when the run ended with work undone.
func (r *Runner) finish(sum Summary, err error) (Summary, error) {
	if h := r.run.HaltedBy(); h != nil {
		err = h
	}
	sum.Created, sum.Rejected = int(r.created.Load()), int(r.rejected.Load())
	sum.Voided, sum.VoidFailed = int(r.voided.Load()), int(r.voidFailed.Load())
	sum.Resent, sum.Attempts = int(r.resent.Load()), int(r.attempts.Load())
	sum.Dropped = int(r.dropped.Load())
	cerr := r.led.OpenRows(func(row *payment.Row) (bool, error) {
		switch row.State {
		case payment.InDoubt, payment.InFlight:
			sum.InDoubt++
		case payment.Held:
			sum.Held++
		default:
			sum.Pending++
		}
		return true, nil
	})
	if cerr != nil {
		return sum, errors.Join(err, fmt.Errorf("count open rows: %w", cerr))
	}
	var oe *outageError
	if errors.As(err, &oe) {
		err = outageSummary(oe, sum)
	}
	if err == nil && (sum.Pending > 0 || sum.InDoubt > 0 || sum.VoidFailed > 0) {
		err = fmt.Errorf("%w: %d rows left pending and %d in doubt after their attempts, %d risky checks not voided; the next submit run continues",
			ErrIncomplete, sum.Pending, sum.InDoubt, sum.VoidFailed)
		if last := r.run.LastUndone(); last != nil {
			err = fmt.Errorf("%w; the last error: %w", err, last)
		}
	}
	return sum, err
}

// halt stops the run for err: no new create starts. The first cause wins.
func (r *Runner) halt(err error) {
	r.run.Halt(err)
}

// undone notes err as the latest failure that left work undone, so that
// the run's error names it (and /healthz files it under its source).
func (r *Runner) undone(err error) {
	r.run.Undone(err)
}

func (r *Runner) stopping(ctx context.Context) bool {
	return r.run.Stopping(ctx)
}

// sendPending feeds pending rows, in batch and line order, to the workers
// and waits for them. There are Concurrency workers, the ceiling; each
// create waits for a slot of the in-flight limit before its row goes in
// flight, so that fewer are out when fewer spend the rate budget.
func (r *Runner) sendPending(ctx context.Context) error {
	ctx, cancel := r.brk.cancelOnTrip(ctx)
	defer cancel()
	work := make(chan payment.RowKey)
	var wg sync.WaitGroup
	for i := 0; i < r.opts.Concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				r.sendRow(ctx, k)
			}
		}()
	}
	err := r.led.OpenRows(func(row *payment.Row) (bool, error) {
		if row.State != payment.Pending || r.skipped(row.Key) {
			return true, nil
		}
		select {
		case work <- row.Key:
			return r.run.HaltedBy() == nil, nil
		case <-ctx.Done():
			return false, nil
		}
	})
	close(work)
	wg.Wait()
	if err != nil {
		return fmt.Errorf("walk pending rows: %w", err)
	}
	if h := r.run.HaltedBy(); h != nil {
		return h
	}
	return ctx.Err()
}

func (r *Runner) hasPending() (bool, error) {
	found := false
	err := r.led.OpenRows(func(row *payment.Row) (bool, error) {
		found = row.State == payment.Pending && !r.skipped(row.Key)
		return !found, nil
	})
	return found, err
}

func (r *Runner) skipped(k payment.RowKey) bool {
	return r.run.Skipped(k)
}

// addCreated counts n checks recorded created, and tells OnCreated.
func (r *Runner) addCreated(n int) {
	if n <= 0 {
		return
	}
	r.created.Add(int64(n))
	if r.opts.OnCreated != nil {
		r.opts.OnCreated(n)
	}
}

func (r *Runner) retried(endpoint string) {
	if r.opts.OnRetry != nil {
		r.opts.OnRetry(endpoint)
	}
}
