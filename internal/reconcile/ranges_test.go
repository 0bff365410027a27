package reconcile

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// days makes counts for consecutive dates from 1 March 2026, skipping the
// dates whose rows are 0 (a date holding no row is not counted at all):
// each pair is rows, open.
func days(pairs ...[2]int) []dayCount {
	var out []dayCount
	for i, p := range pairs {
		if p[0] == 0 {
			continue
		}
		out = append(out, dayCount{date: Date{2026, 3, 1}.AddDays(i), rows: p[0], open: p[1]})
	}
	return out
}

func march(from, to int) Window { return Window{Date{2026, 3, from}, Date{2026, 3, to}} }

// TestCheapestRanges: the planner's choice on the shapes that matter.
func TestCheapestRanges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		days    []dayCount
		page    int
		outside int
		ranges  []Window
		pages   int
		gets    int
	}{
		{"nothing held", nil, 100, 0, nil, 0, 0},
		{"every row final", days([2]int{500, 0}, [2]int{300, 0}), 100, 0, nil, 0, 0},
		{"only rows outside the window", days([2]int{500, 0}), 100, 7, nil, 0, 7},
		{"a few open rows are fetched", days([2]int{300, 3}), 100, 0, nil, 0, 3},
		// 1 page against 1 GET: the GET costs exactly one request.
		{"a tie goes to the fetch", days([2]int{100, 1}), 100, 0, nil, 0, 1},
		{"many open rows are listed", days([2]int{300, 200}), 100, 0, []Window{march(1, 1)}, 3, 0},
		// The benchmark's shape: old final dates, one stuck row 30 days
		// back, 1,000 open rows on the last date. A single range from
		// the stuck date would list 30 dates.
		{"recent dates listed, the old stray fetched",
			append(days([2]int{1700, 1}), dayCount{date: Date{2026, 3, 30}, rows: 1000, open: 1000}),
			100, 0, []Window{march(30, 30)}, 10, 1},
		{"final rows between the open dates split the list",
			days([2]int{200, 150}, [2]int{5000, 0}, [2]int{300, 250}), 100, 0,
			[]Window{march(1, 1), march(3, 3)}, 5, 0},
		// 50+50 rows share one page when listed together: 1 request
		// against 2 GETs, or 2 pages listed apart.
		{"adjacent dates share the last page", days([2]int{50, 1}, [2]int{50, 1}), 100, 0, []Window{march(1, 2)}, 1, 0},
		{"dates holding no row cost nothing to cross",
			days([2]int{60, 2}, [2]int{0, 0}, [2]int{0, 0}, [2]int{40, 2}), 100, 0, []Window{march(1, 4)}, 1, 0},
		{"a final date at the edge is left out", days([2]int{10, 0}, [2]int{100, 90}, [2]int{10, 0}), 100, 0,
			[]Window{march(2, 2)}, 1, 0},
		{"outside rows are fetched whatever is listed", days([2]int{300, 200}), 100, 4, []Window{march(1, 1)}, 3, 4},
		{"pages of 10", days([2]int{95, 12}, [2]int{5, 1}), 10, 0, []Window{march(1, 2)}, 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := cheapestRanges(tc.days, tc.page, tc.outside)
			if !slices.Equal(p.ranges, tc.ranges) || p.pages != tc.pages || p.gets != tc.gets {
				t.Fatalf("ranges %v, %d pages, %d GETs; want %v, %d pages, %d GETs", p.ranges, p.pages, p.gets, tc.ranges, tc.pages, tc.gets)
			}
			if got := planCost(tc.days, tc.page, p.ranges); got.calls+tc.outside != p.calls() {
				t.Errorf("the plan's ranges cost %d requests, it says %d", got.calls+tc.outside, p.calls())
			}
		})
	}
}

// TestCheapestRangesString: the plan as the Summary words it.
func TestCheapestRangesString(t *testing.T) {
	p := cheapestRanges(days([2]int{200, 150}, [2]int{5000, 1}, [2]int{300, 250}), 100, 2)
	want := "403 rows not final; listing 2026-03-01..2026-03-01, 2026-03-03..2026-03-03 (500 rows of batchd, 5 pages) and fetching 3 by id takes at least 8 requests"
	if p.String() != want {
		t.Errorf("got  %q\nwant %q", p.String(), want)
	}
	if s := cheapestRanges(days([2]int{300, 3}), 100, 0).String(); s != "3 rows not final; fetching each by id takes 3 requests" {
		t.Errorf("fetch: %q", s)
	}
	if s := cheapestRanges(days([2]int{300, 0}), 100, 0).String(); s != "every row is final" {
		t.Errorf("none open: %q", s)
	}
}

// TestCheapestRangesIsExact: on random small inputs the planner's cost
// equals the least over every way to list ranges of the dates, found by
// trying them all, and its own ranges cost what it says.
func TestCheapestRangesIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	for iter := range 3000 {
		n := rng.IntN(8)
		page := 1 + rng.IntN(12)
		var ds []dayCount
		for i := range n {
			rows := 1 + rng.IntN(40)
			if rng.IntN(4) == 0 {
				rows = 1 + rng.IntN(3)
			}
			ds = append(ds, dayCount{date: Date{2026, 3, 1}.AddDays(i + rng.IntN(2)*i), rows: rows, open: rng.IntN(rows + 1)})
		}
		slices.SortFunc(ds, func(a, b dayCount) int { return a.date.Compare(b.date) })
		ds = slices.CompactFunc(ds, func(a, b dayCount) bool { return a.date == b.date })
		outside := rng.IntN(3)
		p := cheapestRanges(ds, page, outside)
		best := exhaustive(ds, page)
		got := planCost(ds, page, p.ranges)
		if got != best || p.calls() != best.calls+outside || p.pages != best.pages || p.gets != best.calls-best.pages+outside {
			t.Fatalf("case %d: pages of %d over %+v: planner %+v (its ranges %v cost %+v), exhaustive %+v",
				iter, page, ds, p, p.ranges, got, best)
		}
	}
}

// exhaustive tries every way to list ranges of days: each date is either
// fetched, starts a range, or (when the one before is listed) joins the
// range of the date before. It returns the least cost found.
func exhaustive(ds []dayCount, page int) cost {
	n := len(ds)
	total := 1
	for range n {
		total *= 3
	}
	var best cost
	found := false
	for code := range total {
		var ranges []Window
		ok := true
		for i, c := 0, code; i < n; i, c = i+1, c/3 {
			switch c % 3 {
			case 1:
				ranges = append(ranges, Window{ds[i].date, ds[i].date})
			case 2:
				if len(ranges) == 0 || ranges[len(ranges)-1].To != ds[max(i-1, 0)].date || i == 0 {
					ok = false
				} else {
					ranges[len(ranges)-1].To = ds[i].date
				}
			}
		}
		if !ok {
			continue
		}
		if c := planCost(ds, page, ranges); !found || c.less(best) {
			best, found = c, true
		}
	}
	return best
}

// planCost is the cost of listing ranges and fetching every other open
// row, computed straight from its definition.
func planCost(ds []dayCount, page int, ranges []Window) cost {
	var c cost
	for _, w := range ranges {
		rows := 0
		for _, d := range ds {
			if w.Contains(d.date) {
				rows += d.rows
			}
		}
		c = c.plus(rangeCost(rows, page))
	}
	for _, d := range ds {
		if !listed(ranges, d.date) {
			c.calls += d.open
		}
	}
	return c
}

// TestFullWalkPages: a full walk reads the list's total in pages, at
// least one.
func TestFullWalkPages(t *testing.T) {
	if got := fullWalkPages(250, 100); got != 3 {
		t.Errorf("250 checks: %d, want 3", got)
	}
	if got := fullWalkPages(0, 100); got != 1 {
		t.Errorf("an empty window: %d, want 1", got)
	}
}

// TestSplitWindow: the dates outside the window count only their open rows.
func TestSplitWindow(t *testing.T) {
	in, outside := splitWindow(days([2]int{10, 2}, [2]int{20, 5}, [2]int{30, 7}, [2]int{40, 1}), march(2, 3))
	if len(in) != 2 || in[0].date != (Date{2026, 3, 2}) || in[1].rows != 30 || outside != 3 {
		t.Errorf("in %+v, outside %d", in, outside)
	}
}
