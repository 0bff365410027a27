// Package submit sends every pending row as an eCheck, exactly once.
//
// The API has no idempotency key, so exactly-once rests on three rules:
//
//  1. A row is durably marked in flight, with the label and number its
//     check will carry, before its create request leaves (state.DB.Send).
//  2. A create whose answer was lost (a timeout, a reset, a 5xx after the
//     request was written) puts the row in doubt. A row in doubt is never
//     sent again blindly: after Options.ResolveAfter it is looked up in the
//     check list by label and date, matched on number and amount. Found, it
//     is recorded; not found, it is sent again; when the lookup itself keeps
//     failing, it stays in doubt and is reported, never resent.
//  3. Rows found in flight at start (the previous process died mid-request)
//     are put in doubt before anything else happens.
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

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/state"
)

// API is what submit needs of the eCheck client. *echeck.Client has it.
type API interface {
	CreateCheck(ctx context.Context, req echeck.CheckRequest) (*echeck.Check, error)
	ListChecks(ctx context.Context, p echeck.ListParams) (*echeck.CheckPage, error)
	DeleteCheck(ctx context.Context, id string) error
}

var _ API = (*echeck.Client)(nil)

// Options configures a Runner.
type Options struct {
	Concurrency  int           // parallel workers (default 4)
	ResolveAfter time.Duration // wait after a lost answer before trusting "not found" (default 2m)
	VoidOnRisk   []string      // risk results whose checks batchd voids at once (e.g. "Fail")
	MaxAttempts  int           // transient failures per row per run before leaving it for the next run (default 10)
	Backoff      retry.Backoff
	Now          func() time.Time
	Logger       *slog.Logger
	OnRetry      func(endpoint string) // optional: counts retries for metrics
}

// ErrFatal is wrapped by Run when the API refused batchd itself (401/403):
// nothing will succeed until a person fixes the key or its permissions.
var ErrFatal = errors.New("the API refused batchd's key")

// Summary counts what one run did.
type Summary struct {
	Created   int // checks created (or found after a lost answer)
	Rejected  int // rows the API refused
	Voided    int // checks voided for their risk result
	Resent    int // rows sent again after a lookup found no check
	InDoubt   int // rows still in doubt at the end of the run
	Pending   int // rows left pending (interrupted, or retries exhausted)
	Attempts  int // create requests sent
	Recovered int // rows found in flight at start
}

// Runner works through the ledger's pending rows.
type Runner struct {
	db   *state.DB
	api  API
	opts Options
	log  *slog.Logger
	void map[string]bool

	created, rejected, voided, resent, attempts atomic.Int64
	fatal                                       atomic.Pointer[error]
	skip                                        sync.Map // RowKey -> true: given up on for this run

	triesMu sync.Mutex
	tries   map[state.RowKey]int // create attempts per row in this run
}

// New returns a Runner over db and api.
func New(db *state.DB, api API, opts Options) *Runner {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.ResolveAfter <= 0 {
		opts.ResolveAfter = 2 * time.Minute
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 10
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
	return &Runner{db: db, api: api, opts: opts, log: log, void: void}
}

// Done reports rows finished so far in this run; Progress displays use it.
func (r *Runner) Done() int64 { return r.created.Load() + r.rejected.Load() }

// Run submits until no row is pending, every row in doubt has been looked
// up, or ctx is cancelled. Cancelling ctx is a graceful stop: no new create
// starts, requests already out finish (bounded by the client's timeout) or
// fall into doubt, and everything is committed before Run returns ctx's
// error. A 401 or 403 stops the run at once with ErrFatal.
func (r *Runner) Run(ctx context.Context) (Summary, error) {
	var sum Summary
	n, err := r.db.RecoverInFlight()
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
		waitUntil, err := r.resolveDue(ctx)
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
		if waitUntil.IsZero() {
			break // nothing pending, nothing left to look up
		}
		if err := retry.Sleep(ctx, waitUntil.Sub(r.opts.Now())); err != nil {
			return r.finish(sum, err)
		}
	}
	if err := r.sweepVoids(ctx); err != nil {
		return r.finish(sum, err)
	}
	return r.finish(sum, ctx.Err())
}

// finish fills the summary from the counters and the ledger.
func (r *Runner) finish(sum Summary, err error) (Summary, error) {
	if f := r.fatal.Load(); f != nil {
		err = *f
	}
	sum.Created, sum.Rejected = int(r.created.Load()), int(r.rejected.Load())
	sum.Voided, sum.Resent, sum.Attempts = int(r.voided.Load()), int(r.resent.Load()), int(r.attempts.Load())
	cerr := r.db.OpenRows(func(row *state.Row) (bool, error) {
		switch row.State {
		case state.InDoubt, state.InFlight:
			sum.InDoubt++
		default:
			sum.Pending++
		}
		return true, nil
	})
	return sum, errors.Join(err, cerr)
}

// sendPending feeds pending rows, in batch and line order, to the workers
// and waits for them.
func (r *Runner) sendPending(ctx context.Context) error {
	work := make(chan state.RowKey)
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
	err := r.db.OpenRows(func(row *state.Row) (bool, error) {
		if row.State != state.Pending || r.skipped(row.Key) {
			return true, nil
		}
		select {
		case work <- row.Key:
			return r.fatal.Load() == nil, nil
		case <-ctx.Done():
			return false, nil
		}
	})
	close(work)
	wg.Wait()
	if err != nil {
		return fmt.Errorf("walk pending rows: %w", err)
	}
	if f := r.fatal.Load(); f != nil {
		return *f
	}
	return ctx.Err()
}

func (r *Runner) hasPending() (bool, error) {
	found := false
	err := r.db.OpenRows(func(row *state.Row) (bool, error) {
		found = row.State == state.Pending && !r.skipped(row.Key)
		return !found, nil
	})
	return found, err
}

func (r *Runner) skipped(k state.RowKey) bool {
	_, ok := r.skip.Load(k)
	return ok
}

func (r *Runner) retried(endpoint string) {
	if r.opts.OnRetry != nil {
		r.opts.OnRetry(endpoint)
	}
}
