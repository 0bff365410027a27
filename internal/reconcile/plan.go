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
	// PlanFullWalk lists the whole window: the only read that finds
	// every check at the service.
	PlanFullWalk = "full walk"
	// PlanWalk lists one or more ranges of the dates of the rows not
	// final, and fetches by id those on dates not listed: the cheapest
	// way by the ledger's counts (cheapestRanges). Without webhooks the
	// dates since the last listing are always among them.
	PlanWalk = "walk"
	// PlanFetch fetches each row not final by id (none, when every row is
	// final), because no list is cheaper.
	PlanFetch = "fetch"
)

// FullWalkJob is the name under which the ledger's JobLedger keeps the
// start of the last full walk of a default window, so that the next one
// is due FullWalkEvery later whichever process runs it.
const FullWalkJob = "reconcile-full"

// ListedJob is the name under which the ledger's JobLedger keeps the
// start of the last run without webhooks that listed its window's last
// dates, to today, consistently. Every date listedSlack days before that
// start has then been listed after its last check was made, checks made
// elsewhere included, so a later run lists only the dates since and
// reads the rows not final before them the cheapest way (cheapestRanges),
// instead of walking every date since its oldest stuck check.
const ListedJob = "reconcile-listed"

// listedSlack is how many dates before a listing's start still count as
// open: the day it ran, whose checks were still being made, and the one
// before, which the service's clock, running behind batchd's, may still
// have been dating checks on.
const listedSlack = 2

// fullWalkSlack lets a full walk that falls due within the hour count as
// due: a daily schedule starts a few seconds early or late, and without
// slack a seven-day period would slip to the eighth day half the time.
const fullWalkSlack = time.Hour

// readPlan is what a run must read before it chooses: the whole window
// when why names the reason; otherwise the dates it must list whatever
// they cost (must; the zero Window for none: with webhooks, events tell
// of checks made elsewhere), and the cheapest reads of the rows not final
// on the others.
type readPlan struct {
	why  string
	must Window
}

// listing is the last listing of the recent dates (ListedJob) as a run
// may use it: its start, or why it may not (webhooks on, none recorded,
// or one dated after now).
type listing struct {
	at  time.Time
	why string
}

// lastListing reads the last listing of the recent dates, once a run.
func (r *Runner) lastListing(now time.Time) (listing, error) {
	if r.opts.Webhooks {
		return listing{why: "webhooks are on"}, nil
	}
	at, why, err := r.due(ListedJob, now, "listing of the recent dates")
	return listing{at: at, why: why}, err
}

// planRead says what this run must read of window w. explicit is a
// window the caller named; listed is the last listing (lastListing).
func (r *Runner) planRead(now time.Time, w Window, explicit bool, m *matcher, listed listing) (readPlan, error) {
	o := r.opts
	switch {
	case explicit:
		return readPlan{why: "the window was given"}, nil
	case len(m.doubts) > 0:
		// Only a listed check can resolve a row whose create answer was
		// lost (by label, number and amount); no id is known to fetch.
		return readPlan{why: fmt.Sprintf("%d rows in doubt are resolved from the list", len(m.doubts))}, nil
	case o.Webhooks && o.Events == nil:
		return readPlan{why: "the ledger lists no webhook events of unknown checks"}, nil
	}
	if _, why, err := r.due(FullWalkJob, now, "full walk"); why != "" || err != nil {
		return readPlan{why: why}, err
	}
	if o.Webhooks {
		return readPlan{}, nil
	}
	if listed.why != "" {
		return readPlan{why: listed.why}, nil
	}
	must := Window{From: DateOf(listed.at.UTC()).AddDays(1 - listedSlack), To: w.To}
	if !w.From.Before(must.From) {
		// The usual daily run: nothing to choose, and counting the rows
		// by date would only delay the first page.
		return readPlan{why: "every date of the window is since the last listing"}, nil
	}
	return readPlan{must: must}, nil
}

// due reads job's recorded start and says why it calls for a full walk:
// none recorded, one dated after now (a clock set back: trust neither),
// or, for FullWalkJob, one FullWalkEvery ago; "" when it does not.
func (r *Runner) due(job string, now time.Time, what string) (time.Time, string, error) {
	last, ok, err := r.db.LastSuccess(job)
	switch {
	case err != nil:
		return last, "", fmt.Errorf("read the last %s: %w", what, err)
	case !ok:
		return last, "no " + what + " recorded yet", nil
	case last.After(now):
		return last, "the last " + what + " is dated " + last.UTC().Format(time.RFC3339) + ", after now", nil
	case job == FullWalkJob && now.Sub(last) >= r.opts.FullWalkEvery-fullWalkSlack:
		return last, "the last full walk started " + last.UTC().Format(time.RFC3339), nil
	}
	return last, "", nil
}

// sinceListing widens a default window back to the day of the last
// listing, within lookbackDays of now in loc, when there is one a run may
// use (without webhooks): a run that did not happen (batchd stopped for
// days) must not leave its dates unlisted for good, and without webhooks
// only a listing shows the checks made elsewhere on them. The dates
// before that day were listed after they ended (the service's clock
// aside, which the plan's must range allows for within the window).
func sinceListing(w Window, listed listing, now time.Time, loc *time.Location, lookbackDays int) Window {
	if listed.why != "" {
		return w
	}
	from := DateOf(listed.at.UTC())
	if floor := DateOf(now.In(loc)).AddDays(-lookbackDays); from.Before(floor) {
		from = floor
	}
	if from.Before(w.From) {
		w.From = from
	}
	return w
}

// recordListing records, once the run's reports are delivered, a full
// walk of a default window (FullWalkJob) and, without webhooks, a listing
// of its last dates (ListedJob): the unknown checks a listing finds are
// recorded nowhere but in those reports, and after this no run may list
// their dates again for a week.
func (r *Runner) recordListing(sum *Summary, plan readPlan, explicit, consistent bool, now time.Time) error {
	if explicit || !consistent {
		return nil
	}
	if sum.Plan == PlanFullWalk {
		if err := r.db.RecordSuccess(FullWalkJob, now); err != nil {
			return fmt.Errorf("record the full walk: %w", err)
		}
	}
	if !r.opts.Webhooks && (sum.Plan == PlanFullWalk || !plan.must.From.IsZero()) {
		if err := r.db.RecordSuccess(ListedJob, now); err != nil {
			return fmt.Errorf("record the listing of the recent dates: %w", err)
		}
	}
	return nil
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
