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
// past it sends nothing and puts the row in doubt (rowrun.Engine.DropLate), and no
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
	// doubt instead; see rowrun.Engine.DropLate). Workers call it.
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

// Runner works through the ledger's pending rows, as one kind on the row
// engine (internal/rowrun): the engine owns the run loop, the in-flight
// limit, the retried send under a slot, the send-by gate and when a row
// in doubt is looked up; the Runner owns the check create, the lookup
// (resolve.Resolver), the breaker and voiding by risk.
type Runner struct {
	led      payment.Rows
	svc      payment.Service
	resolver *resolve.Resolver
	opts     Options
	log      *slog.Logger
	void     map[string]bool
	brk      *breaker
	eng      *rowrun.Engine

	created, rejected, voided, voidFailed, resent, attempts, dropped atomic.Int64
}

// New returns a Runner over a ledger and the service, for one run.
func New(led payment.Rows, svc payment.Service, opts Options) *Runner {
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
	r := &Runner{led: led, svc: svc, opts: opts, log: log, void: void, brk: newBreaker(opts.BreakAfter, opts.Now)}
	r.eng = rowrun.New(rowrun.Options{Now: opts.Now, Log: log, Retry: opts.Retry, Limit: opts.Limit,
		Ceiling: opts.Concurrency, ResolveAfter: opts.ResolveAfter, SendMargin: opts.SendMargin,
		OnDropped: func(n int) {
			r.dropped.Add(int64(n))
			if opts.OnSendDropped != nil {
				opts.OnSendDropped(n)
			}
		}})
	lookup := r.eng.Retry()
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
// forestalled stay in doubt, and a warning says so. Cancelling ctx is a
// graceful stop: no new create starts, requests already out finish
// (bounded by the client's timeout) or fall into doubt, and everything is
// committed before Run returns ctx's error. A refused key
// (payment.ErrKeyRefused) or a ledger failure (payment.ErrLedger) stops
// the run at once with that error. A run that ends otherwise with work
// left returns ErrIncomplete.
func (r *Runner) Run(ctx context.Context) (Summary, error) {
	err := rowrun.Run(ctx, r.eng, rowrun.Kind[*payment.Row]{Recover: r.led.RecoverInFlight, Open: r.led.OpenRows,
		Resolve: r.resolveDue, SendPending: r.sendPending})
	if err == nil {
		err = r.sweepVoids(ctx)
	}
	return r.finish(err)
}

// finish fills the summary from the counters and the ledger, and says
// what is left when the run ended with work undone.
func (r *Runner) finish(err error) (Summary, error) {
	sum := Summary{Recovered: r.eng.Recovered()}
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
		return sum, errors.Join(r.eng.Outcome(err, nil, ""), fmt.Errorf("count open rows: %w", cerr))
	}
	left := ""
	if sum.Pending > 0 || sum.InDoubt > 0 || sum.VoidFailed > 0 {
		left = fmt.Sprintf("%d rows left pending and %d in doubt after their attempts, %d risky checks not voided; the next submit run continues",
			sum.Pending, sum.InDoubt, sum.VoidFailed)
	}
	err = r.eng.Outcome(err, ErrIncomplete, left)
	var oe *outageError
	if errors.As(err, &oe) {
		err = outageSummary(oe, sum)
	}
	return sum, err
}

// sendPending feeds pending rows, in batch and line order, to the workers
// and waits for them, and says how many it fed. There are as many workers
// as the in-flight limit's ceiling; each create waits for a slot of the
// limit before its row goes in flight, so that fewer are out when fewer
// spend the rate budget.
func (r *Runner) sendPending(ctx context.Context) (int, error) {
	ctx, cancel := r.brk.cancelOnTrip(ctx)
	defer cancel()
	work := make(chan payment.RowKey)
	var wg sync.WaitGroup
	for i := 0; i < r.eng.Workers(); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				r.sendRow(ctx, k)
			}
		}()
	}
	sent := 0
	err := r.led.OpenRows(func(row *payment.Row) (bool, error) {
		if row.State != payment.Pending || r.eng.Skipped(row.Key) {
			return true, nil
		}
		select {
		case work <- row.Key:
			sent++
			return r.eng.HaltedBy() == nil, nil
		case <-ctx.Done():
			return false, nil
		}
	})
	close(work)
	wg.Wait()
	if err != nil {
		return sent, fmt.Errorf("walk pending rows: %w", err)
	}
	if h := r.eng.HaltedBy(); h != nil {
		return sent, h
	}
	return sent, ctx.Err()
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
