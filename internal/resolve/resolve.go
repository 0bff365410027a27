package resolve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
)

// Resolver looks rows in doubt up at the service. Submit owns it: only a
// Resolver releases a row in doubt to be sent again.
type Resolver struct {
	Ledger  payment.Rows
	Service payment.Service
	// Retry governs each page of a lookup. A page that still fails leaves
	// every row of the lookup in doubt.
	Retry retry.Policy
	Log   *slog.Logger
}

// Outcome counts what one Resolve did.
type Outcome struct {
	Found    int // rows whose check was found and recorded
	Released int // rows with no check, back to pending to be sent again
}

// ErrLookup wraps a lookup that could not be completed: the rows stay in
// doubt and are never resent on its account. It is a failure of the
// service (its list could not be read whole), filed under "api".
var ErrLookup = fmt.Errorf("lookup of rows in doubt failed: %w", payment.ErrService)

// Resolve settles rows in doubt. It lists the checks carrying the rows'
// labels created around their attempts and binds each found check (Bind).
// The service documents its label filter only as finding "similar"
// checks, and may store a label otherwise than it was sent, so a row not
// found that way is looked for again in the whole date range, unfiltered,
// before anything is released. Only a row that a complete walk of that
// range shows has no check is released to pending.
//
// A failed lookup returns an error wrapping ErrLookup (or ErrKeyRefused,
// or ErrLedger) and changes nothing more.
func (r *Resolver) Resolve(ctx context.Context, rows []*payment.Row) (Outcome, error) {
	var out Outcome
	if len(rows) == 0 {
		return out, nil
	}
	from, to := window(rows, time.Now())
	byLabel := map[string][]*payment.Row{}
	for _, row := range rows {
		byLabel[row.Label] = append(byLabel[row.Label], row)
	}
	left := map[payment.RowKey]*payment.Row{}
	for label, group := range byLabel {
		checks, err := r.walk(ctx, payment.CheckQuery{Label: label, FromDate: from, ToDate: to})
		if err != nil {
			return out, err
		}
		bound, err := Bind(ctx, r.Ledger, group, checks, "found by label and number after a lost answer")
		if err != nil {
			return out, err
		}
		out.Found += len(bound)
		for _, row := range group {
			if _, ok := bound[row.Key]; !ok {
				left[row.Key] = row
			}
		}
	}
	if len(left) == 0 {
		return out, nil
	}
	checks, err := r.walk(ctx, payment.CheckQuery{FromDate: from, ToDate: to})
	if err != nil {
		return out, err
	}
	rest := make([]*payment.Row, 0, len(left))
	for _, row := range left {
		rest = append(rest, row)
	}
	bound, err := Bind(ctx, r.Ledger, rest, checks, "found in the check list after a lost answer")
	if err != nil {
		return out, err
	}
	out.Found += len(bound)
	for _, row := range rest {
		if _, ok := bound[row.Key]; ok {
			continue
		}
		_, err := r.Ledger.Release(row.Key, "no check with this label, number and amount at the service; sending again")
		switch {
		case errors.Is(err, payment.ErrIllegal):
			// Settled meanwhile by reconcile: it found the check.
		case err != nil:
			return out, fmt.Errorf("release %s: %w", row.Key, err)
		default:
			out.Released++
		}
	}
	return out, nil
}

// window is the date range of a lookup: from the day before the earliest
// attempt to the day after now, in UTC. A row's check cannot be older than
// its first possible attempt, but may be any younger: a restored ledger's
// rows were perhaps sent days after their recorded attempt (the snapshot's
// time). The service's day boundary is not specified, so the range is
// widened a day each side.
func window(rows []*payment.Row, now time.Time) (from, to string) {
	first := rows[0].AttemptAt
	for _, row := range rows[1:] {
		if row.AttemptAt.Before(first) {
			first = row.AttemptAt
		}
	}
	if first.IsZero() || first.After(now) {
		first = now
	}
	return first.UTC().AddDate(0, 0, -1).Format(time.DateOnly), now.UTC().AddDate(0, 0, 1).Format(time.DateOnly)
}

// walk pages through the check list for q, sorted by date, and returns
// every distinct check. A walk is complete only when it has seen as many
// distinct checks as the largest total any page reported; a service that
// drops or repeats entries between pages makes it read again (bounded),
// and a walk that never settles is an ErrLookup: deciding "no check" on a
// partial list would pay twice.
func (r *Resolver) walk(ctx context.Context, q payment.CheckQuery) ([]payment.Check, error) {
	const rereads = 3
	for try := 0; ; try++ {
		checks, total, err := r.walkOnce(ctx, q)
		if err != nil {
			return nil, err
		}
		if len(checks) >= total {
			return checks, nil
		}
		if try+1 >= rereads {
			return nil, fmt.Errorf("%w: the check list of %s..%s %s showed %d distinct checks of %d after %d walks", ErrLookup,
				q.FromDate, q.ToDate, labelled(q.Label), len(checks), total, rereads)
		}
		r.log().Info("check list changed during a lookup; reading it again", "from", q.FromDate, "to", q.ToDate, "seen", len(checks), "total", total)
	}
}

func (r *Resolver) walkOnce(ctx context.Context, q payment.CheckQuery) ([]payment.Check, int, error) {
	q.Limit, q.Sort, q.Direction = 100, "date", "ASC"
	seen := map[string]bool{}
	var out []payment.Check
	total := 0
	for q.Page = 1; ; q.Page++ {
		page, err := r.page(ctx, q)
		if err != nil {
			return nil, 0, err
		}
		total = max(total, page.Total)
		for _, c := range page.Checks {
			if c.ID != "" && !seen[c.ID] {
				seen[c.ID] = true
				out = append(out, c)
			}
		}
		if len(page.Checks) == 0 || q.Page >= page.LastPage {
			return out, total, nil
		}
	}
}

// page fetches one page, retrying what may be retried.
func (r *Resolver) page(ctx context.Context, q payment.CheckQuery) (*payment.CheckPage, error) {
	var page *payment.CheckPage
	err := retry.Do(ctx, r.Retry, func(ctx context.Context) error {
		var err error
		page, err = r.Service.ListChecks(ctx, q)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, payment.ErrKeyRefused), errors.Is(err, payment.ErrRefused):
			return retry.Permanent(err)
		}
		return retry.After(payment.RetryAfter(err), err)
	})
	if err != nil {
		if errors.Is(err, payment.ErrKeyRefused) || ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: list checks %s..%s %s page %d: %w", ErrLookup, q.FromDate, q.ToDate, labelled(q.Label), q.Page, err)
	}
	return page, nil
}

func labelled(label string) string {
	if label == "" {
		return "(every label)"
	}
	return fmt.Sprintf("labelled %q", label)
}

func (r *Resolver) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}
