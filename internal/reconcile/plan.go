package reconcile

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// How a run reads the service (Summary.Plan).
const (
	// PlanFullWalk lists the whole window, as every run does without
	// webhooks: the only read that finds every check at the service.
	PlanFullWalk = "full walk"
	// PlanWalk lists only the dates of the rows not final, because that
	// takes fewer requests than fetching them one by one.
	PlanWalk = "walk"
	// PlanFetch fetches each row not final by id (none, when every row is
	// final).
	PlanFetch = "fetch"
)

// FullWalkJob is the name under which the ledger's JobLedger keeps the
// start of the last full walk made with webhooks on, so that the next one
// is due FullWalkEvery later whichever process runs it.
const FullWalkJob = "reconcile-full"

// fullWalkSlack lets a full walk that falls due within the hour count as
// due: a daily schedule starts a few seconds early or late, and without
// slack a seven-day period would slip to the eighth day half the time.
const fullWalkSlack = time.Hour

// fullWalkReason says why this run must list the whole window, or ""
// when webhooks let it read less. explicit is a window the caller named.
func (r *Runner) fullWalkReason(now time.Time, explicit bool, m *matcher) (string, error) {
	o := r.opts
	switch {
	case !o.Webhooks:
		return "webhooks are off", nil
	case explicit:
		return "the window was given", nil
	case o.Events == nil:
		return "the ledger lists no webhook events of unknown checks", nil
	case len(m.doubts) > 0:
		// Only a listed check can resolve a row whose create answer was
		// lost (by label, number and amount); no id is known to fetch.
		return fmt.Sprintf("%d rows in doubt are resolved from the list", len(m.doubts)), nil
	}
	last, ok, err := r.db.LastSuccess(FullWalkJob)
	switch {
	case err != nil:
		return "", fmt.Errorf("read the last full walk: %w", err)
	case !ok:
		return "no full walk recorded yet", nil
	case last.After(now): // a clock set back: trust neither
		return "the last full walk is dated " + last.UTC().Format(time.RFC3339) + ", after now", nil
	case now.Sub(last) >= o.FullWalkEvery-fullWalkSlack:
		return "the last full walk started " + last.UTC().Format(time.RFC3339), nil
	}
	return "", nil
}

// plan is the choice, with webhooks, between listing and fetching.
type plan struct {
	walk    bool
	window  Window // the dates listed when walk: those of the rows not final
	open    int    // rows not final: each is looked at, whichever the way
	outside int    // rows not final created outside the run's window: fetched either way
	rows    int    // rows batchd holds created in window
	pages   int    // the walk's estimated pages
}

func (p plan) String() string {
	if p.open == 0 {
		return "every row is final"
	}
	walk := p.pages + p.outside
	if p.window == (Window{}) {
		return fmt.Sprintf("%d rows not final, all outside the window", p.open)
	}
	return fmt.Sprintf("%d rows not final; listing %s (%d rows of batchd) takes about %d requests",
		p.open, p.window, p.rows, walk)
}

// choose weighs, once the ledger scan has made its records, the two ways
// to look at every row not final: fetch each by id, or list the dates
// they were created on (w clipped to those dates) and fetch only those
// created outside w. The list's length is estimated from the rows batchd
// holds created on those dates, a page per pageSize, plus one page for the
// checks at the service batchd did not create. A tie goes to the list,
// which also shows those checks.
func (m *matcher) choose(w Window, pageSize int) plan {
	m.mu.Lock()
	defer m.mu.Unlock()
	var p plan
	byDate := map[Date]int{}
	for _, rec := range m.records {
		d := rec.serviceDate()
		if w.Contains(d) {
			byDate[d]++
		}
		if rec.final() {
			continue
		}
		p.open++
		if !w.Contains(d) {
			p.outside++
			continue
		}
		if p.window.From.IsZero() || d.Before(p.window.From) {
			p.window.From = d
		}
		if p.window.To.IsZero() || p.window.To.Before(d) {
			p.window.To = d
		}
	}
	if p.window == (Window{}) {
		return p
	}
	for d, n := range byDate {
		if p.window.Contains(d) {
			p.rows += n
		}
	}
	p.pages = ceilDiv(p.rows, pageSize) + 1
	p.walk = p.pages+p.outside <= p.open
	return p
}

// countingAPI counts the requests a run sends. Reading is all reconcile
// does at the service, so these two methods are all there is to count.
type countingAPI struct {
	API
	n atomic.Int64
}

func (c *countingAPI) ListChecks(ctx context.Context, q payment.CheckQuery) (*payment.CheckPage, error) {
	c.n.Add(1)
	return c.API.ListChecks(ctx, q)
}

func (c *countingAPI) GetCheck(ctx context.Context, id string) (*payment.Check, error) {
	c.n.Add(1)
	return c.API.GetCheck(ctx, id)
}

func (c *countingAPI) calls() int { return int(c.n.Load()) }
