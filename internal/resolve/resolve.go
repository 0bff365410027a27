package resolve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/rowrun"
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
	// Now is batchd's clock, the one submit and every other job read. It
	// is required: a Resolver without it refuses to look anything up
	// (ErrNoClock) rather than fall back to the wall clock, so a caller
	// that forgot to pass its clock fails loudly instead of deciding
	// "no check" on a window built from another clock.
	Now func() time.Time
	// SendMargin is how long after a row's send-by deadline
	// (payment.Row.SendBy) a lookup that finds no check may release it,
	// for the clocks of the instance that sent and of this one to differ
	// (see ReleasableAt). Zero means DefaultSendMargin.
	SendMargin time.Duration
}

// SkewBound is how far, at most, the service's clock may be behind
// batchd's for a lookup to be certain. A lookup's date range starts this
// much, and a day for the service's time zone, before the earliest
// attempt; its upper end is left open, so a service ahead of batchd by
// any amount is covered. A lookup that sees the service's dates further
// behind leaves its rows in doubt (ErrSkew) instead of releasing any.
const SkewBound = 7 * 24 * time.Hour

// zoneSlack covers the service's time zone: a UTC instant falls, in any
// zone from UTC-12 to UTC+14, on its UTC day or the day either side.
const zoneSlack = 24 * time.Hour

// ErrNoClock is returned by a Resolver built without its clock.
var ErrNoClock = errors.New("resolver has no clock (Resolver.Now is nil): nothing looked up, rows stay in doubt")

// Outcome counts what one Resolve did.
type Outcome struct {
	Found    int // rows whose check was found and recorded
	Released int // rows with no check, back to pending to be sent again
	// Waiting counts rows with no check found that were left in doubt
	// because their send-by deadline and SendMargin had not passed: their
	// create may still leave, so they are looked up again after it.
	Waiting int
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
// range shows has no check is released to pending, and only after the
// service's dates of the rows' batches show its clock within SkewBound of
// batchd's (checkSkew). The range never rests on the two clocks agreeing:
// it starts SkewBound and a day before the earliest attempt and has no end
// (see window).
//
// A row whose send-by deadline plus SendMargin is still ahead (see
// ReleasableAt) may be bound to a check found for it, but is never
// released: it stays in doubt and is counted in Outcome.Waiting.
//
// A failed lookup returns an error wrapping ErrLookup (ErrSkew when the
// clocks disagree beyond the bound; or ErrKeyRefused, or ErrLedger; or
// ErrNoClock) and changes nothing more.
func (r *Resolver) Resolve(ctx context.Context, rows []*payment.Row) (Outcome, error) {
	var out Outcome
	if len(rows) == 0 {
		return out, nil
	}
	if r.Now == nil {
		return out, ErrNoClock
	}
	now := r.Now()
	from, anchor := window(rows, now)
	var to string // open: a check younger than batchd thinks is still in range
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
	unfound := slices.DeleteFunc(rest, func(row *payment.Row) bool { _, ok := bound[row.Key]; return ok })
	n := len(unfound)
	unfound = slices.DeleteFunc(unfound, func(row *payment.Row) bool { return !r.mayRelease(row, now) })
	out.Waiting = n - len(unfound)
	if len(unfound) == 0 {
		return out, nil
	}
	if err := r.checkSkew(unfound, anchor); err != nil {
		return out, err
	}
	for _, row := range unfound {
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

// window is the lower end of a lookup's date range (YYYY-MM-DD), or ""
// for none, and the time it was counted back from (anchor, zero for
// none); the upper end is always open. A row's check cannot be created
// before its attempt was sent, but the service dates it on its own clock
// and in its own time zone, so the range starts SkewBound and a day
// (zoneSlack) before the UTC day of the earliest attempt. Nothing bounds
// how much later the check may be dated: the service's clock may be ahead,
// the lookup may run days later, a restored ledger's rows were perhaps
// sent after their recorded attempt; the open end covers all of them
// without trusting any clock. An attempt recorded after now says batchd's
// clock was ahead when it was recorded (it has since been set back), so
// the range starts from now instead. A row with no recorded attempt gives
// no lower end: the whole list is walked.
func window(rows []*payment.Row, now time.Time) (from string, anchor time.Time) {
	first := rows[0].AttemptAt
	for _, row := range rows[1:] {
		if row.AttemptAt.IsZero() || row.AttemptAt.Before(first) {
			first = row.AttemptAt
		}
	}
	if first.IsZero() {
		return "", time.Time{}
	}
	anchor = first
	if first.After(now) {
		anchor = now
	}
	return anchor.UTC().Add(-SkewBound - zoneSlack).Format(time.DateOnly), anchor
}

// ErrSkew wraps a lookup whose service dates disagree with batchd's
// clock by more than SkewBound, so that its range may miss a check.
var ErrSkew = fmt.Errorf("%w: the service's clock is behind batchd's by more than a lookup allows", ErrLookup)

// checkSkew tests a lookup's range against the service's own dates before
// any of rows is released. A row with a check tells how the service dated
// a create against batchd's time of sending it (AttemptAt). A row
// attempted at A has its check dated about A less that distance, which
// must not fall before the range, which starts SkewBound and a day (the
// time zone) before anchor (window). When the service's dates show it
// further behind, the rows stay in doubt and the error says why and what
// to fix. A service ahead of batchd is harmless, the range having no
// upper end; a range without a lower end (anchor zero) needs no test.
//
// The evidence is every row with a check of the rows' own batches (bound
// by this lookup or sent before); when they hold none (a file whose every
// row is in doubt), the newest few other payment batches that do.
func (r *Resolver) checkSkew(rows []*payment.Row, anchor time.Time) error {
	if anchor.IsZero() || len(rows) == 0 {
		return nil
	}
	margin := rows[0].AttemptAt.Sub(anchor)
	own := map[uint64]bool{}
	for _, row := range rows {
		own[row.Key.Batch] = true
		margin = min(margin, row.AttemptAt.Sub(anchor))
	}
	limit := SkewBound + zoneSlack + max(margin, 0)
	seen := false
	for b := range own {
		n, err := r.skewIn(b, limit)
		if err != nil {
			return err
		}
		seen = seen || n > 0
	}
	if seen {
		return nil
	}
	const others = 3 // batches read at most for evidence elsewhere
	batches, err := r.Ledger.Batches()
	if err != nil {
		return fmt.Errorf("list batches to check the service's clock: %w", err)
	}
	read := 0
	for i := len(batches) - 1; i >= 0 && read < others; i-- {
		b := batches[i]
		if own[b.ID] || !b.Kind.Payments() || b.Counts[payment.Submitted] == 0 {
			continue
		}
		read++
		if n, err := r.skewIn(b.ID, limit); err != nil || n > 0 {
			return err
		}
	}
	return nil
}

// skewIn compares, for every row of batch b with a check, its attempt and
// its check's date, and returns how many it compared, or ErrSkew when one
// shows the service more than limit behind.
func (r *Resolver) skewIn(b uint64, limit time.Duration) (int, error) {
	n := 0
	err := r.Ledger.Rows(b, func(row *payment.Row) (bool, error) {
		if row.CheckCreated.IsZero() || row.AttemptAt.IsZero() {
			return true, nil
		}
		n++
		if behind := row.AttemptAt.Sub(row.CheckCreated); behind > limit {
			return false, fmt.Errorf("%w: %s was sent at %s (batchd's clock) and its check %s is dated %s (the service's), %s behind where at most %s is allowed; rows left in doubt: set the clock of batchd's host, or have the service's set",
				ErrSkew, row.Key, row.AttemptAt.UTC().Format(time.DateTime), row.CheckID, row.CheckCreated.UTC().Format(time.DateTime),
				behind.Round(time.Minute), limit)
		}
		return true, nil
	})
	if err != nil {
		return n, fmt.Errorf("check the service's clock against batch %d: %w", b, err)
	}
	return n, nil
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
	err := rowrun.Read(ctx, r.Retry, func(ctx context.Context) (err error) {
		page, err = r.Service.ListChecks(ctx, q)
		return err
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
