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

// resolveDue looks up every row in doubt whose ResolveAfter has passed.
// It returns the earliest time another row in doubt falls due, or the zero
// time when none is left waiting. Rows of one label share one walk of the
// list, so a batch with many lost answers costs a few pages, not a lookup
// per row.
func (r *Runner) resolveDue(ctx context.Context) (time.Time, error) {
	now := r.opts.Now()
	due := map[string][]*state.Row{}
	var next time.Time
	err := r.db.OpenRows(func(row *state.Row) (bool, error) {
		if row.State != state.InDoubt || r.skipped(row.Key) {
			return true, nil
		}
		at := row.AttemptAt.Add(r.opts.ResolveAfter)
		if at.After(now) {
			if next.IsZero() || at.Before(next) {
				next = at
			}
			return true, nil
		}
		due[row.Label] = append(due[row.Label], row)
		return true, nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("walk rows in doubt: %w", err)
	}
	for label, rows := range due {
		if ctx.Err() != nil {
			return next, ctx.Err()
		}
		if err := r.resolveLabel(ctx, label, rows); err != nil {
			return next, err
		}
	}
	return next, nil
}

// resolveLabel lists the checks carrying label around the rows' attempt
// dates and settles each row: found, recorded; not found, pending again.
func (r *Runner) resolveLabel(ctx context.Context, label string, rows []*state.Row) error {
	checks, err := r.listLabel(ctx, label, rows)
	if errors.Is(err, ErrFatal) {
		return err
	}
	if err != nil {
		for _, row := range rows {
			r.skip.Store(row.Key, true)
		}
		r.log.Error("lookup of rows in doubt failed; they stay in doubt and are not resent", "label", label, "rows", len(rows), "err", err)
		return nil
	}
	for _, row := range rows {
		chk, err := r.match(row, checks)
		if err != nil {
			return err
		}
		if chk != nil {
			r.created.Add(1)
			r.recordCreated(ctx, row.Key, chk, "found by label and number after a lost answer")
			r.log.Info("row in doubt resolved: the check exists", "row", row.Key.String(), "check_id", chk.CheckID)
			continue
		}
		r.release(row.Key, "no check with this label, number and amount at the service; sending again")
		r.resent.Add(1)
		r.log.Info("row in doubt resolved: no check was made; it will be sent again", "row", row.Key.String())
	}
	return nil
}

// match finds the row's check among checks: the same label, number and
// amount, and not already bound to another row of the ledger. The label is
// compared again because the service's label filter is documented only as
// finding "similar" checks; the sandbox matches exactly, the live service
// might not.
func (r *Runner) match(row *state.Row, checks []echeck.Check) (*echeck.Check, error) {
	for i := range checks {
		c := &checks[i]
		if c.Label != row.Label || c.Number != row.Number || c.Amount != row.Payment.Amount {
			continue
		}
		owner, owned, err := r.db.CheckOwner(c.CheckID)
		if err != nil {
			return nil, err
		}
		if owned && owner != row.Key {
			continue
		}
		return c, nil
	}
	return nil, nil
}

// listLabel pages through the checks carrying label, created from the day
// before the earliest attempt to the day after the latest (the service's
// day boundary is not specified, so the window is widened by a day each
// side). Each page is retried on transient errors.
func (r *Runner) listLabel(ctx context.Context, label string, rows []*state.Row) ([]echeck.Check, error) {
	first, last := rows[0].AttemptAt, rows[0].AttemptAt
	for _, row := range rows[1:] {
		if row.AttemptAt.Before(first) {
			first = row.AttemptAt
		}
		if row.AttemptAt.After(last) {
			last = row.AttemptAt
		}
	}
	p := echeck.ListParams{
		Label: label, Limit: 100, Sort: "date", Direction: "ASC",
		FromDate: first.UTC().AddDate(0, 0, -1).Format(time.DateOnly),
		ToDate:   last.UTC().AddDate(0, 0, 1).Format(time.DateOnly),
	}
	var out []echeck.Check
	for p.Page = 1; ; p.Page++ {
		page, err := r.listPage(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Checks...)
		if len(page.Checks) == 0 || p.Page >= page.LastPage {
			return out, nil
		}
	}
}

// listPage fetches one page, retrying transient failures with backoff.
func (r *Runner) listPage(ctx context.Context, p echeck.ListParams) (*echeck.CheckPage, error) {
	for attempt := 0; ; attempt++ {
		page, err := r.api.ListChecks(ctx, p)
		if err == nil {
			return page, nil
		}
		switch echeck.ClassOf(err) {
		case echeck.Fatal:
			ferr := fmt.Errorf("%w: %v", ErrFatal, err)
			r.fatal.CompareAndSwap(nil, &ferr)
			return nil, ferr
		case echeck.Permanent:
			return nil, fmt.Errorf("list checks labelled %q page %d: %w", p.Label, p.Page, err)
		}
		if attempt+1 >= r.opts.MaxAttempts {
			return nil, fmt.Errorf("list checks labelled %q page %d: %d attempts: %w", p.Label, p.Page, attempt+1, err)
		}
		r.retried("check.list")
		var wait time.Duration
		var apiErr *echeck.Error
		if errors.As(err, &apiErr) {
			wait = apiErr.RetryAfter
		}
		if err := retry.Sleep(ctx, r.opts.Backoff.Delay(attempt, wait)); err != nil {
			return nil, err
		}
	}
}
