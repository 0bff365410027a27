package rowrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/batchd/batchd/internal/inflight"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
)

// DefaultSendMargin is how long after a row's send-by deadline its lookup
// may release it, when Options.SendMargin is zero. The deadline was set
// on the clock of the instance that recorded the intent; the instance
// looking the row up may be another, whose clock is somewhat off. Five
// seconds covers the drift of hosts kept by NTP many times over, and the
// moments a request already written at its deadline spends on the wire,
// while costing a new leader only a few seconds before its lookups.
const DefaultSendMargin = 5 * time.Second

// clockPoll is how often, at least, a wait of the engine reads its clock
// again. The clock is injected (Options.Now) and may move otherwise than
// the wall clock does: a test's clock is driven by the test, a
// rehearsal's is shifted. A wait therefore sleeps in steps no longer than
// this and ends when the injected clock, not a timer, says so.
const clockPoll = 50 * time.Millisecond

// ErrTurnAgain ends a row's send with the row pending again, to be sent in
// its turn (onboarding sends a row whose customer it just learned back to
// that customer's lane). It is no failure: the row is not given up on.
var ErrTurnAgain = errors.New("the row goes back to wait for its turn")

// errGaveUp stops a row's sends for this run.
var errGaveUp = errors.New("gave up on the row for this run")

// Options configures an Engine. The zero value of each field has a
// default (New).
type Options struct {
	// Noun names the kind's rows in log lines ("row", "funding-source row").
	Noun string
	// Now is batchd's clock; nil means time.Now.
	Now func() time.Time
	// Sleep waits d; nil means retry.Sleep. Waits for rows in doubt sleep
	// in steps and end when Now says so; a test may advance its clock here.
	Sleep func(ctx context.Context, d time.Duration) error
	Log   *slog.Logger
	// Retry governs a row's sends; Retry.MaxAttempts (default 10) also
	// bounds the sends of one row in one run, across resends after
	// lookups.
	Retry retry.Policy
	// Limit is the in-flight limit every send takes a slot of before its
	// row goes in flight; nil means one of Ceiling (default 4).
	Limit   *inflight.Limit
	Ceiling int
	// ResolveAfter is how long after a lost answer a row in doubt waits
	// before it is looked up (default 2m): the service's lists may be
	// slow to show what was just made, and "not there" must not be read
	// too early.
	ResolveAfter time.Duration
	// SendMargin is how long after a row's send-by deadline its lookup may
	// release it; zero means DefaultSendMargin.
	SendMargin time.Duration
	// OnDropped, optional, is told of sends kept from leaving at their
	// send-by deadline. Workers call it.
	OnDropped func(n int)
}

// Engine is what every kind of row that calls the service shares around
// its requests: the run's state, the in-flight limit, the retried send of
// one row under a slot, the send-by gate and the drop at the deadline,
// when a row in doubt falls due for its lookup, the run loop (Run) and
// the run's outcome. A kind keeps its ledger rows, its requests, its
// lookup and its counters, and drives the engine through Kind.
type Engine struct {
	State
	opts      Options
	log       *slog.Logger
	recovered int // rows Run found in flight at its start
}

// New returns an engine for one run; a run's state starts empty.
func New(opts Options) *Engine {
	if opts.Noun == "" {
		opts.Noun = "row"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = retry.Sleep
	}
	if opts.Retry.MaxAttempts <= 0 {
		opts.Retry.MaxAttempts = 10
	}
	if opts.Ceiling <= 0 && opts.Limit != nil {
		opts.Ceiling = opts.Limit.Ceiling()
	}
	if opts.Ceiling <= 0 {
		opts.Ceiling = 4
	}
	if opts.Limit == nil {
		opts.Limit = inflight.New(inflight.Options{Ceiling: opts.Ceiling, Now: opts.Now})
	}
	if opts.ResolveAfter <= 0 {
		opts.ResolveAfter = 2 * time.Minute
	}
	if opts.SendMargin <= 0 {
		opts.SendMargin = DefaultSendMargin
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{opts: opts, log: log}
}

// Now reads the engine's clock.
func (e *Engine) Now() time.Time { return e.opts.Now() }

// Retry is the retry policy of the run, its defaults filled in: a kind's
// lookups retry their reads by it.
func (e *Engine) Retry() retry.Policy { return e.opts.Retry }

// Workers is how many rows may be sent at once: the limit's ceiling.
func (e *Engine) Workers() int { return e.opts.Ceiling }

// Attempt sends one request of a row under slot, and says what became of
// it for the in-flight limit. It returns nil when the row reached an
// outcome, a permanent error when the run must stop or the row be left
// for the next run, and a retryable one when the row may be sent again.
type Attempt func(ctx context.Context, slot *inflight.Slot) (inflight.Outcome, error)

// Send takes one pending row k as far as it goes, retrying what the
// service did not act on: each try takes a slot of the in-flight limit
// first (a row waiting its turn stays pending, so that only what the rate
// budget needs is in flight, and in doubt after a crash), and no new try
// starts once the run is stopping. A row whose tries are used up, or
// whose try failed for good, is given up on for the rest of the run.
func (e *Engine) Send(ctx context.Context, k payment.RowKey, attempt Attempt) {
	err := retry.Do(ctx, e.opts.Retry, func(ctx context.Context) error {
		if e.Stopping(ctx) {
			return retry.Permanent(context.Canceled) // a stop: no new request starts
		}
		if n := e.Try(k); n > e.opts.Retry.MaxAttempts {
			return retry.Permanent(fmt.Errorf("%w: %d attempts", errGaveUp, n-1))
		}
		slot, err := e.opts.Limit.Acquire(ctx)
		if err != nil {
			return retry.Permanent(context.Canceled) // a stop while waiting
		}
		outcome := inflight.Ignored
		defer func() { slot.Release(outcome) }()
		if e.Stopping(ctx) {
			// The run halted (a refused key, a ledger failure) while
			// this row waited for its slot: nothing more leaves.
			return retry.Permanent(context.Canceled)
		}
		outcome, err = attempt(ctx, slot)
		return err
	})
	if err != nil && !errors.Is(err, ErrTurnAgain) && !e.Stopping(ctx) {
		e.GiveUp(k, err)
	}
}

// GiveUp leaves row k as it is for the rest of the run, for err, which
// the run's error names if nothing later does.
func (e *Engine) GiveUp(k payment.RowKey, err error) {
	e.Skip(k)
	e.Undone(err)
	e.log.Warn("giving up on the "+e.opts.Noun+" for this run; the next run continues", "row", k.String(), "err", err)
}

// Stop halts the run for err (the first cause wins) and returns it
// permanent: no new request starts.
func (e *Engine) Stop(err error) error {
	e.Halt(err)
	return retry.Permanent(err)
}

// LedgerFailed stops the run for a ledger failure: a run that cannot
// record what it does must not send anything more.
func (e *Engine) LedgerFailed(err error) error { return e.Stop(err) }

// Gate is ctx for a request of a row with deadline sendBy (see Gate).
func (e *Engine) Gate(ctx context.Context, sendBy time.Time, leaving func()) context.Context {
	return Gate(ctx, sendBy, e.opts.Now, leaving)
}

// Passed reports whether a create with deadline sendBy may no longer
// leave now.
func (e *Engine) Passed(sendBy time.Time) bool { return Passed(sendBy, e.opts.Now()) }

// DropLate puts row k, whose request was kept from leaving at its send-by
// deadline, in doubt through doubt, without sending anything: it is
// looked up after the deadline and the margin, and sent again only if
// nothing is found. When that write fails (the ledger fenced this
// instance: it lost the lead) the run stops.
func (e *Engine) DropLate(k payment.RowKey, sendBy time.Time, doubt func(reason string) error) error {
	if err := doubt(DropReason); err != nil {
		return e.LedgerFailed(fmt.Errorf("put %s in doubt at its send-by deadline: %w", k, err))
	}
	if e.opts.OnDropped != nil {
		e.opts.OnDropped(1)
	}
	e.log.Warn("create not sent: its send-by deadline passed before the request could leave; the row is in doubt and will be looked up after the deadline",
		"row", k.String(), "send_by", sendBy.UTC().Format(time.RFC3339Nano), "now", e.opts.Now().UTC().Format(time.RFC3339Nano))
	return nil
}

// ReleasableAt is the earliest time at which a lookup that finds nothing
// of a row with deadline sendBy may release it: the deadline plus the
// margin. Before then its create may still leave (from this instance, or
// from one that lost the lead and does not know it yet), so "not found"
// proves nothing. It is the zero time for no deadline (a ledger that
// fences nothing): any complete lookup may release the row.
func (e *Engine) ReleasableAt(sendBy time.Time) time.Time {
	if sendBy.IsZero() {
		return time.Time{}
	}
	return sendBy.Add(e.opts.SendMargin)
}

// DueAt is when a row in doubt falls due for its lookup: ResolveAfter
// after its attempt, and not before ReleasableAt. bySendBy says the
// deadline is what sets it.
func (e *Engine) DueAt(attemptAt, sendBy time.Time) (at time.Time, bySendBy bool) {
	at = attemptAt.Add(e.opts.ResolveAfter)
	if rel := e.ReleasableAt(sendBy); rel.After(at) {
		return rel, true
	}
	return at, false
}

// Outcome is a run's error as it ends with err: the cause of a halt
// first; else err; else, when left describes work left undone, incomplete
// wrapped with it and the last failure that left work undone.
func (e *Engine) Outcome(err error, incomplete error, left string) error {
	if h := e.HaltedBy(); h != nil {
		return h
	}
	if err != nil || left == "" {
		return err
	}
	err = fmt.Errorf("%w: %s", incomplete, left)
	if last := e.LastUndone(); last != nil {
		err = fmt.Errorf("%w; the last error: %w", err, last)
	}
	return err
}

// Writes are the ledger writes Engine.Failed makes of one row in flight;
// each returns the ledger's error as it is.
type Writes struct {
	Reject  func(msg string) error    // the service refused the request: its words
	Release func(reason string) error // nothing of it was done: pending again
	Doubt   func(reason string) error // its answer was lost: in doubt
}

// Failed records the failure err of the request what (empty for a kind
// that makes one) of row k in flight, by the four-way reading of Failed,
// through w: a ledger write that fails stops the run, naming the row and
// the write. rejected, when not nil, counts a refusal; retrying, when not
// nil, is told when the row may be sent again.
func (e *Engine) Failed(k payment.RowKey, err error, what string, w Writes, rejected, retrying func()) error {
	prefix := ""
	if what != "" {
		prefix = what + ": "
	}
	return Failed(err, prefix, Actions{
		Reject: func(msg string) error {
			if lerr := w.Reject(msg); lerr != nil {
				return e.LedgerFailed(fmt.Errorf("record the rejection of %s: %w", k, lerr))
			}
			if rejected != nil {
				rejected()
			}
			e.log.Info(e.opts.Noun+" refused by the service", "row", k.String(), "request", what, "reason", msg)
			return nil
		},
		Release: func(reason string) error { return e.Release(k, reason, w.Release) },
		Doubt: func(reason string, cause error) error {
			if lerr := w.Doubt(reason); lerr != nil {
				return e.LedgerFailed(fmt.Errorf("record %s in doubt: %w", k, lerr))
			}
			e.log.Warn("answer lost; the row will be looked up before any resend", "row", k.String(), "request", what, "err", cause)
			return nil
		},
		Halt:     e.Stop,
		Retrying: retrying,
	})
}

// Release returns row k in flight to pending through release; a ledger
// failure stops the run and comes back permanent.
func (e *Engine) Release(k payment.RowKey, reason string, release func(reason string) error) error {
	if err := release(reason); err != nil {
		return e.LedgerFailed(fmt.Errorf("release %s: %w", k, err))
	}
	return nil
}
