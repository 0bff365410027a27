package submit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/state"
)

// sendRow creates the check of one pending row, retrying transient
// refusals. It returns when the row has a check, was rejected, fell into
// doubt, or is left pending (run stopping, or attempts used up).
func (r *Runner) sendRow(ctx context.Context, k state.RowKey) {
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil || r.fatal.Load() != nil {
			return // a stop: no new create starts
		}
		if n := r.countTry(k); n > r.opts.MaxAttempts {
			r.giveUp(k, fmt.Sprintf("%d attempts in this run; left pending for the next run", n-1))
			return
		}
		row, err := r.db.Send(k)
		if err != nil {
			r.log.Error("mark row in flight", "row", k.String(), "err", err)
			return
		}
		r.attempts.Add(1)
		// The request runs to its end even when the run is stopping: a
		// cancelled create is an ambiguous one, and ambiguity costs a
		// lookup. The client's own timeout bounds it.
		chk, err := r.api.CreateCheck(context.WithoutCancel(ctx), checkRequest(row))
		if err == nil {
			r.created.Add(1)
			r.recordCreated(ctx, k, chk, "")
			return
		}
		if !r.handleFailure(ctx, k, err, attempt) {
			return
		}
	}
}

// handleFailure records a failed create and reports whether to try again.
func (r *Runner) handleFailure(ctx context.Context, k state.RowKey, err error, attempt int) bool {
	var apiErr *echeck.Error
	errors.As(err, &apiErr)
	switch echeck.ClassOf(err) {
	case echeck.Permanent:
		msg := err.Error()
		if apiErr != nil && apiErr.Message != "" {
			msg = apiErr.Message
		}
		if _, err := r.db.Reject(k, msg); err != nil {
			r.log.Error("record rejection", "row", k.String(), "err", err)
		}
		r.rejected.Add(1)
		r.log.Info("row refused by the API", "row", k.String(), "reason", msg)
		return false
	case echeck.Fatal:
		r.release(k, "the API refused the key: "+err.Error())
		ferr := fmt.Errorf("%w: %v; check api.key_file / BATCHD_API_KEY and that the key belongs to api.mode and has permission", ErrFatal, err)
		r.fatal.CompareAndSwap(nil, &ferr)
		return false
	case echeck.Ambiguous:
		if _, err := r.db.Doubt(k, "answer lost: "+err.Error()); err != nil {
			r.log.Error("record doubt", "row", k.String(), "err", err)
		}
		r.log.Warn("create answer lost; the row will be looked up before any resend", "row", k.String(), "err", err)
		return false
	default: // Retryable: the service did not act on the request
		r.release(k, "not processed: "+err.Error())
		r.retried("check.create")
		// The client has already paused the shared limiter for the
		// service's Retry-After; this worker also waits at least as long.
		var wait time.Duration
		if apiErr != nil {
			wait = apiErr.RetryAfter
		}
		return retry.Sleep(ctx, r.opts.Backoff.Delay(attempt, wait)) == nil
	}
}

func (r *Runner) release(k state.RowKey, reason string) {
	if _, err := r.db.Release(k, reason); err != nil {
		r.log.Error("release row", "row", k.String(), "err", err)
	}
}

// countTry counts one more create attempt of k in this run, across
// resends after lookups, so that no row can loop forever.
func (r *Runner) countTry(k state.RowKey) int {
	r.triesMu.Lock()
	defer r.triesMu.Unlock()
	if r.tries == nil {
		r.tries = map[state.RowKey]int{}
	}
	r.tries[k]++
	return r.tries[k]
}

func (r *Runner) giveUp(k state.RowKey, reason string) {
	r.skip.Store(k, true)
	r.log.Warn("giving up on row for this run", "row", k.String(), "reason", reason)
}

// recordCreated stores the check on the row and voids it at once when its
// risk result is one the configuration refuses.
func (r *Runner) recordCreated(ctx context.Context, k state.RowKey, chk *echeck.Check, note string) {
	res := resultOf(chk, note)
	if _, err := r.db.Created(k, res); err != nil {
		r.log.Error("record created check", "row", k.String(), "check_id", chk.CheckID, "err", err)
		return
	}
	if r.void[res.Risk] {
		r.voidCheck(ctx, k, chk.CheckID, res.Risk)
	}
}

// voidCheck deletes a check whose risk result is refused, and records why.
// A failed void is retried by the sweep at the end of the run.
func (r *Runner) voidCheck(ctx context.Context, k state.RowKey, id, risk string) {
	if err := r.api.DeleteCheck(context.WithoutCancel(ctx), id); err != nil {
		r.log.Warn("void check", "row", k.String(), "check_id", id, "err", err)
		return
	}
	if err := r.db.Voided(k, "risk result "+risk+" is in submit.void_on_risk"); err != nil {
		r.log.Error("record void", "row", k.String(), "err", err)
		return
	}
	r.voided.Add(1)
}

// sweepVoids voids checks that should have been voided but were not (the
// DELETE failed, or the process stopped in between).
func (r *Runner) sweepVoids(ctx context.Context) error {
	if len(r.void) == 0 {
		return nil
	}
	type todo struct {
		k        state.RowKey
		id, risk string
	}
	var list []todo
	err := r.db.TrackedRows(func(row *state.Row) (bool, error) {
		if r.void[row.Risk] && row.CheckStatus == "in_process" {
			list = append(list, todo{row.Key, row.CheckID, row.Risk})
		}
		return true, nil
	})
	for _, t := range list {
		if ctx.Err() != nil {
			break
		}
		r.voidCheck(ctx, t.k, t.id, t.risk)
	}
	return err
}
