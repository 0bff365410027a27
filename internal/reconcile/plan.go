package reconcile

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// How a run reads the service (Summary.Plan).
const (
	// PlanFullWalk lists the whole window, as every run does without
	// webhooks: the only read that finds every check at the service.
	PlanFullWalk = "full walk"
	// PlanWalk lists one or more ranges of the dates of the rows not
	// final, and fetches by id those on dates not listed: the cheapest
	// way by the ledger's counts (cheapestRanges).
	PlanWalk = "walk"
	// PlanFetch fetches each row not final by id (none, when every row is
	// final), because no list is cheaper.
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

// dayCounts reads from the ledger, per service date, the rows batchd
// holds with a check and how many of those are not final: what the
// planner weighs. It keeps one count a date, not a record a row, so that
// planning costs no memory as the ledger grows.
func (m *matcher) dayCounts(ctx context.Context) ([]dayCount, error) {
	byDate := map[Date]dayCount{}
	err := m.eachRow(ctx, func(r *payment.Row) (bool, error) {
		if r.State != payment.Submitted || r.CheckID == "" {
			return true, nil
		}
		d := DateOf(r.CheckCreated.UTC())
		c := byDate[d]
		c.date = d
		c.rows++
		if !r.CheckStatus.Final() {
			c.open++
		}
		byDate[d] = c
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("count the rows by date: %w", err)
	}
	return slices.SortedFunc(maps.Values(byDate), func(a, b dayCount) int { return a.date.Compare(b.date) }), nil
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
