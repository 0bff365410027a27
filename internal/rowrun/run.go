package rowrun

import (
	"context"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// Row is a row of a kind the engine runs: what the engine reads of it.
type Row interface {
	Attempt() payment.Attempt
}

// Kind is one kind of row the engine runs: what it does with its ledger
// rows of type R. The engine decides when; the kind decides how. Every
// field is required.
type Kind[R Row] struct {
	// Recover puts the rows found in flight at start (the previous
	// process died with their requests out) in doubt, and says how many.
	Recover func() (int, error)
	// Open walks the kind's open rows in ledger order while f says so.
	Open func(f func(R) (bool, error)) error
	// Resolve looks the due rows in doubt up at the service and settles
	// each: bound to what it made, released to be sent again, or left in
	// doubt and given up on for the run (Engine.GiveUp) when its lookup
	// failed. Its error stops the run.
	Resolve func(ctx context.Context, due []R) error
	// SendPending sends the pending rows not given up on, each through
	// Engine.Send, and says how many it started. Its error stops the run.
	SendPending func(ctx context.Context) (int, error)
}

// Run is the run loop every kind shares. Rows found in flight are put in
// doubt first; then, until nothing is left to do, the rows in doubt whose
// lookup is due are looked up and the pending rows sent; when nothing
// could be sent and rows in doubt wait for their lookups, the engine
// waits for the earliest, on its clock. A row in doubt is never sent
// again before a lookup released it. Run returns when no row is pending
// that may be sent and none in doubt waits for a lookup in this run, or
// with the error that stopped it (ctx's, a halt's cause).
func Run[R Row](ctx context.Context, e *Engine, k Kind[R]) error {
	n, err := k.Recover()
	if err != nil {
		return fmt.Errorf("recover %ss in flight: %w", e.opts.Noun, err)
	}
	e.recovered = n
	if n > 0 {
		e.log.Warn(e.opts.Noun+"s were in flight when the last run stopped; they will be looked up before any resend", "rows", n)
	}
	for {
		waiting, err := resolveDue(ctx, e, k)
		if err != nil {
			return err
		}
		sent, err := k.SendPending(ctx)
		if err != nil {
			return err
		}
		if sent > 0 {
			continue // rows released meanwhile, or waiting on a row just settled
		}
		if waiting.rows == 0 {
			return ctx.Err() // nothing pending can be sent; nothing left to look up
		}
		if err := e.wait(ctx, waiting.next); err != nil {
			e.stoppedWaiting(waiting, err)
			return err
		}
	}
}

// Recovered is how many rows Run found in flight at its start.
func (e *Engine) Recovered() int { return e.recovered }

// resolveDue hands every row in doubt whose lookup is due, and that the
// run has not given up on, to the kind's Resolve, in one call. It returns
// what is left waiting: the rows not due yet and when the earliest falls
// due.
func resolveDue[R Row](ctx context.Context, e *Engine, k Kind[R]) (doubtWait, error) {
	w, due, err := walkDoubts(e, k, e.Now(), nil)
	if err != nil || len(due) == 0 {
		return w, err
	}
	if err := k.Resolve(ctx, due); err != nil {
		return w, err
	}
	// Walk again: rows that went in doubt meanwhile wait their turn, and a
	// row the lookup left in doubt without giving up on it comes due
	// again when the clock, read anew, says so (it may have moved back
	// between the two readings). One that was due already is not waited
	// for: the run ends with it in doubt, reported, rather than looping.
	looked := make(map[payment.RowKey]bool, len(due))
	for _, row := range due {
		looked[row.Attempt().Key] = true
	}
	w, _, err = walkDoubts(e, k, e.Now(), looked)
	return w, err
}

// walkDoubts sorts the rows in doubt the run has not given up on at now:
// due ones (none of looked: a row looked up already waits only when its
// time is still to come), and those left waiting.
func walkDoubts[R Row](e *Engine, k Kind[R], now time.Time, looked map[payment.RowKey]bool) (doubtWait, []R, error) {
	var w doubtWait
	var due []R
	err := k.Open(func(row R) (bool, error) {
		a := row.Attempt()
		if a.State != payment.InDoubt || e.Skipped(a.Key) {
			return true, nil
		}
		switch at, bySendBy := e.DueAt(a.At, a.SendBy); {
		case at.After(now):
			w.add(at, bySendBy)
		case looked == nil:
			due = append(due, row)
		case !looked[a.Key]:
			w.add(now, bySendBy) // due now: the next pass looks it up
		}
		return true, nil
	})
	if err != nil {
		return w, nil, fmt.Errorf("walk %ss in doubt: %w", e.opts.Noun, err)
	}
	return w, due, nil
}

// wait waits until the engine's clock reads at or later, or ctx ends (its
// error). It reads the clock at least every clockPoll.
func (e *Engine) wait(ctx context.Context, at time.Time) error {
	for {
		d := at.Sub(e.Now())
		if d <= 0 {
			return ctx.Err()
		}
		if err := e.opts.Sleep(ctx, min(d, clockPoll)); err != nil {
			return err
		}
	}
}

// doubtWait is what is left in doubt: rows whose lookup is not due yet,
// the earliest and latest times one falls due, and how many of them wait
// for a send-by deadline (plus the margin) rather than ResolveAfter.
type doubtWait struct {
	next, last time.Time
	rows       int
	sendBy     int
}

// add counts a row not due before at.
func (w *doubtWait) add(at time.Time, bySendBy bool) {
	w.rows++
	if bySendBy {
		w.sendBy++
	}
	if w.next.IsZero() || at.Before(w.next) {
		w.next = at
	}
	if at.After(w.last) {
		w.last = at
	}
}

// stoppedWaiting logs why rows stay in doubt when ctx ended during the
// wait for their lookups.
func (e *Engine) stoppedWaiting(w doubtWait, err error) {
	e.log.Warn("run stopped before rows in doubt could be looked up; they stay in doubt, and a later run looks them up (none is sent before that)",
		"rows", w.rows, "waiting_for_send_by", w.sendBy, "next_due", w.next.UTC().Format(time.RFC3339),
		"last_due", w.last.UTC().Format(time.RFC3339), "err", err)
}
