package reconcile

import (
	"fmt"
	"slices"
	"strings"
)

// listPlan is a way to look at every row not final: list the checks of
// some date ranges, and fetch by id each row not final outside them.
type listPlan struct {
	ranges []Window // the dates listed, disjoint and in order
	pages  int      // the lists' estimated pages
	gets   int      // rows not final fetched by id, outside the window included
	rows   int      // rows batchd holds on the listed dates
	open   int      // rows not final, wherever they are
}

// calls is the plan's estimated number of requests.
func (p listPlan) calls() int { return p.pages + p.gets }

// String says what the plan does and what it costs, for PlanReason.
func (p listPlan) String() string {
	switch {
	case len(p.ranges) == 0 && p.open == 0:
		return "every row is final"
	case len(p.ranges) == 0:
		return fmt.Sprintf("%d rows not final; fetching each by id takes %d requests", p.open, p.gets)
	}
	names := make([]string, len(p.ranges))
	for i, r := range p.ranges {
		names[i] = r.String()
	}
	return fmt.Sprintf("%d rows not final; listing %s (%d rows of batchd, %d pages) and fetching %d by id takes at least %d requests",
		p.open, strings.Join(names, ", "), p.rows, p.pages, p.gets, p.calls())
}

// cost is what the planner minimises, compared field by field: first the
// requests; on a tie, fewer ranges (each may end on a page the checks
// batchd did not create spill into), then fewer pages (a fetch by id
// costs exactly one request, a page may cost more), then fewer rows
// listed.
type cost struct{ calls, ranges, pages, rows int }

func (c cost) plus(d cost) cost {
	return cost{c.calls + d.calls, c.ranges + d.ranges, c.pages + d.pages, c.rows + d.rows}
}

func (c cost) less(d cost) bool {
	switch {
	case c.calls != d.calls:
		return c.calls < d.calls
	case c.ranges != d.ranges:
		return c.ranges < d.ranges
	case c.pages != d.pages:
		return c.pages < d.pages
	}
	return c.rows < d.rows
}

// rangeCost is the cost of listing, in one range, dates holding rows rows
// of batchd: a page per pageSize of them, and at least the one request
// that finds the range empty. The estimate counts only the checks batchd
// holds, so it is the fewest pages the list can take while the service
// has them all; checks created elsewhere can only add pages.
func rangeCost(rows, pageSize int) cost {
	pages := max(1, ceilDiv(rows, pageSize))
	return cost{calls: pages, ranges: 1, pages: pages, rows: rows}
}

// cheapestRanges chooses which dates to list so that looking at every row
// not final takes the fewest requests: the sum, over the listed ranges,
// of rangeCost, plus one GET for each row not final on a date not listed
// and for each of the outside rows (not final, created outside the
// window). days are the window's dates holding rows, in order; a range
// runs from one of them to a later one, and the dates between that hold
// no row cost nothing to cross. A count that stands for several dates
// (mustList; only the last may) is always listed, never fetched.
//
// It is exact: best[i] is the cheapest plan for days[:i], and the last
// of those days is either fetched (best[i-1] plus its open rows) or
// ends a range that starts at some days[j] (best[j] plus that range's
// cost). Two adjacent ranges never beat their union, which costs no more
// pages and one range fewer, so ranges need not be kept apart. The time
// is quadratic in the dates, which the lookback bounds (60 by default).
func cheapestRanges(days []dayCount, pageSize, outside int) listPlan {
	n := len(days)
	rowsBefore := make([]int, n+1) // rowsBefore[i]: rows of days[:i]
	open := outside
	for i, d := range days {
		rowsBefore[i+1] = rowsBefore[i] + d.rows
		open += d.open
	}
	best := make([]cost, n+1)
	from := make([]int, n+1) // the first day of the range ending at day i-1, or -1: day i-1 is fetched
	for i := 1; i <= n; i++ {
		mustList := !days[i-1].until.IsZero() // never fetched instead
		best[i], from[i] = best[i-1].plus(cost{calls: days[i-1].open}), -1
		for j := 0; j < i; j++ {
			c := best[j].plus(rangeCost(rowsBefore[i]-rowsBefore[j], pageSize))
			if (mustList && from[i] < 0) || c.less(best[i]) {
				best[i], from[i] = c, j
			}
		}
	}
	p := listPlan{pages: best[n].pages, rows: best[n].rows, gets: best[n].calls - best[n].pages + outside, open: open}
	for i := n; i > 0; {
		if j := from[i]; j >= 0 {
			p.ranges = append(p.ranges, Window{From: days[j].date, To: days[i-1].last()})
			i = j
			continue
		}
		i--
	}
	slices.Reverse(p.ranges)
	return p
}

// fullWalkPages is the fewest pages a walk of the whole window could
// take: one pass over the list at the largest total the service reported,
// at least one page even for none. A full walk lists every check whoever
// made it, so the list's own total is the exact measure; counting the
// ledger's rows instead would read every row a second time on the path
// every run without webhooks takes, which is held to the paging floor.
func fullWalkPages(total, pageSize int) int { return rangeCost(total, pageSize).pages }
