package submit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/resolve"
)

// resolveDue hands every row in doubt whose ResolveAfter has passed to the
// resolver, in one lookup. It returns the earliest time another row in
// doubt falls due, or the zero time when none is left waiting.
func (r *Runner) resolveDue(ctx context.Context) (time.Time, error) {
	now := r.opts.Now()
	var due []*payment.Row
	var next time.Time
	err := r.led.OpenRows(func(row *payment.Row) (bool, error) {
		if row.State != payment.InDoubt || r.skipped(row.Key) {
			return true, nil
		}
		if at := row.AttemptAt.Add(r.opts.ResolveAfter); at.After(now) {
			if next.IsZero() || at.Before(next) {
				next = at
			}
			return true, nil
		}
		due = append(due, row)
		return true, nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("walk rows in doubt: %w", err)
	}
	if len(due) == 0 {
		return next, nil
	}
	out, err := r.resolver.Resolve(ctx, due)
	r.addCreated(out.Found)
	r.resent.Add(int64(out.Released))
	switch {
	case errors.Is(err, resolve.ErrLookup):
		r.undone(err)
		for _, row := range due {
			r.skip.Store(row.Key, true)
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
		r.log.Info("rows in doubt resolved", "found", out.Found, "sent_again", out.Released)
	}
	return next, nil // risky checks found here are voided by the sweep at the end of the run
}
