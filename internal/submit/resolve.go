package submit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/resolve"
)

// resolveDue hands every row in doubt whose lookup is due (dueAt) to the
// resolver, in one lookup. It returns what is left waiting: the rows not
// due yet and the earliest time one falls due (zero when none waits).
func (r *Runner) resolveDue(ctx context.Context) (doubtWait, error) {
	now := r.opts.Now()
	var due []*payment.Row
	var next doubtWait
	err := r.led.OpenRows(func(row *payment.Row) (bool, error) {
		if row.State != payment.InDoubt || r.skipped(row.Key) {
			return true, nil
		}
		if at, bySendBy := r.dueAt(row); at.After(now) {
			next.add(at, bySendBy)
			return true, nil
		}
		due = append(due, row)
		return true, nil
	})
	if err != nil {
		return doubtWait{}, fmt.Errorf("walk rows in doubt: %w", err)
	}
	if len(due) == 0 {
		return next, nil
	}
	out, err := r.resolver.Resolve(ctx, due)
	r.addCreated(out.Found)
	r.resent.Add(int64(out.Released))
	if out.Waiting > 0 {
		// The clock moved back between the two readings: the rows the
		// resolver left waiting come due again at their deadlines.
		for _, row := range due {
			if at := r.resolver.ReleasableAt(row); at.After(now) {
				next.add(at, true)
			}
		}
	}
	switch {
	case errors.Is(err, resolve.ErrLookup):
		r.undone(err)
		for _, row := range due {
			r.run.Skip(row.Key)
		}
		r.log.Error("lookup of rows in doubt failed; they stay in doubt and are not resent", "rows", len(due), "err", err)
		return next, nil
	case errors.Is(err, payment.ErrKeyRefused), errors.Is(err, payment.ErrLedger):
		r.halt(err)
		return next, err
	case err != nil:
		return next, err
	}
	if out.Found+out.Released > 0 {
		// After a rewind of the ledger's database this is the line that
		// says what the lookups of the rows put in doubt found.
		r.log.Info("rows in doubt resolved", "looked_up", len(due), "found", out.Found, "sent_again", out.Released)
	}
	return next, nil // risky checks found here are voided by the sweep at the end of the run
}

// dueAt is when row's lookup falls due: Options.ResolveAfter after its
// attempt (the service's list may be slow to show a check just made), and
// not before its send-by deadline plus the resolver's margin (its create
// may still leave until then: resolve.Resolver.ReleasableAt). bySendBy
// says the deadline is what sets it.
func (r *Runner) dueAt(row *payment.Row) (at time.Time, bySendBy bool) {
	at = row.AttemptAt.Add(r.opts.ResolveAfter)
	if rel := r.resolver.ReleasableAt(row); rel.After(at) {
		return rel, true
	}
	return at, false
}
