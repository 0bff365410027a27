package conformance

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/sandbox"
)

// listFixture is 23 checks labelled "page", created over three sandbox
// days (8, 8, 7), with check numbers and names in an order unlike their
// creation order, plus two checks labelled "other".
type listFixture struct {
	days  [3]string            // creation dates, YYYY-MM-DD
	day   map[string]int       // check_id → index into days
	items map[string]listEntry // check_id → number and name
}

type listEntry struct {
	number int
	name   string
}

const pageTotal = 23

func newListFixture(t *testing.T, e *env, c *echeck.Client) listFixture {
	t.Helper()
	f := listFixture{day: map[string]int{}, items: map[string]listEntry{}}
	for i := 0; i < pageTotal; i++ {
		d := min(i/8, 2)
		if i > 0 && i%8 == 0 {
			e.advance(keyA, 1)
		}
		f.days[d] = e.today(keyA).Format("2006-01-02")
		r := validRequest("page")
		n := 100 + (i*7)%pageTotal // a permutation of 100..122
		r.Number, r.Name = strconv.Itoa(n), fmt.Sprintf("Payer %02d", (i*5)%pageTotal)
		ch := create(t, c, r)
		f.day[ch.CheckID] = d
		f.items[ch.CheckID] = listEntry{n, r.Name}
	}
	for i := 0; i < 2; i++ {
		create(t, c, validRequest("other"))
	}
	return f
}

// TestListPaging covers the list query of spec 4.1 and the envelope of 2.7.
func TestListPaging(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		c := e.client(keyA)
		ctx := t.Context()
		f := newListFixture(t, e, c)
		list := func(t *testing.T, p echeck.ListParams) *echeck.CheckPage {
			t.Helper()
			if p.Label == "" {
				p.Label = "page"
			}
			pg, err := c.ListChecks(ctx, p)
			if err != nil {
				t.Fatalf("ListChecks(%+v): %v", p, err)
			}
			return pg
		}
		paging := func(t *testing.T, pg *echeck.CheckPage, cur, last, per, total, n int) {
			t.Helper()
			want := echeck.Paging{CurrentPage: cur, LastPage: last, PerPage: per, Total: total}
			if pg.Paging != want || len(pg.Checks) != n {
				t.Errorf("paging %+v with %d checks, want %+v with %d", pg.Paging, len(pg.Checks), want, n)
			}
		}

		t.Run("defaults", func(t *testing.T) {
			p1 := list(t, echeck.ListParams{})
			paging(t, p1, 1, 2, 15, pageTotal, 15)
			p2 := list(t, echeck.ListParams{Page: 2})
			paging(t, p2, 2, 2, 15, pageTotal, 8)
			p3 := list(t, echeck.ListParams{Page: 3})
			paging(t, p3, 3, 2, 15, pageTotal, 0)
			ids := map[string]bool{}
			for _, ch := range append(p1.Checks, p2.Checks...) {
				if _, ours := f.items[ch.CheckID]; !ours || ids[ch.CheckID] {
					t.Errorf("check %s listed twice or not labelled page", ch.CheckID)
				}
				ids[ch.CheckID] = true
			}
			if len(ids) != pageTotal {
				t.Errorf("pages 1 and 2 hold %d distinct checks, want %d", len(ids), pageTotal)
			}
			// Default sort is date, newest first: the 7 checks of the last day
			// lead page 1.
			for i, ch := range p1.Checks[:7] {
				if f.day[ch.CheckID] != 2 {
					t.Errorf("entry %d of the default list is from day %d, want the newest day", i, f.day[ch.CheckID])
				}
			}
			wantDays(t, f, slices.Concat(p1.Checks, p2.Checks), true)
		})

		t.Run("limit", func(t *testing.T) {
			paging(t, list(t, echeck.ListParams{Limit: 1}), 1, pageTotal, 1, pageTotal, 1)
			paging(t, list(t, echeck.ListParams{Limit: 1, Page: pageTotal}), pageTotal, pageTotal, 1, pageTotal, 1)
			paging(t, list(t, echeck.ListParams{Limit: 100}), 1, 1, 100, pageTotal, pageTotal)
			paging(t, list(t, echeck.ListParams{Limit: 5, Page: 5}), 5, 5, 5, pageTotal, 3)
			for _, n := range []int{101, -1, 1000} {
				_, err := c.ListChecks(ctx, echeck.ListParams{Limit: n})
				apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "limit")
			}
			// The client does not send a zero limit (it means "default"), so
			// the sandbox's refusal of limit=0 is shown raw.
			rawErr(t, e.raw(http.MethodGet, "/v1/check/list?limit=0", keyA, nil), http.StatusBadRequest, "limit")
			rawErr(t, e.raw(http.MethodGet, "/v1/check/list?limit=101", keyA, nil), http.StatusBadRequest, "limit")
			rawErr(t, e.raw(http.MethodGet, "/v1/check/list?limit=ten", keyA, nil), http.StatusBadRequest, "limit")
			// The generic operator $limit (spec 4.1).
			r := e.raw(http.MethodGet, "/v1/check/list?label=page&$limit=4", keyA, nil)
			if got, _ := e.pagingText(t, r.obj("list")["per_page"]); got != "4" {
				t.Errorf("$limit=4: per_page %v, want 4", got)
			}
		})

		t.Run("page", func(t *testing.T) {
			paging(t, list(t, echeck.ListParams{Page: 1}), 1, 2, 15, pageTotal, 15)
			for _, n := range []int{-1, -100} {
				_, err := c.ListChecks(ctx, echeck.ListParams{Page: n})
				apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "page")
			}
			rawErr(t, e.raw(http.MethodGet, "/v1/check/list?page=0", keyA, nil), http.StatusBadRequest, "page")
			rawErr(t, e.raw(http.MethodGet, "/v1/check/list?page=x", keyA, nil), http.StatusBadRequest, "page")
		})

		t.Run("sort", func(t *testing.T) {
			numbers := func(pg *echeck.CheckPage) []int {
				var out []int
				for _, ch := range pg.Checks {
					n, _ := strconv.Atoi(ch.Number)
					out = append(out, n)
				}
				return out
			}
			asc := numbers(list(t, echeck.ListParams{Limit: 100, Sort: "number", Direction: "ASC"}))
			if !slices.IsSorted(asc) || len(asc) != pageTotal || asc[0] != 100 || asc[pageTotal-1] != 122 {
				t.Errorf("sort=number ASC: %v", asc)
			}
			desc := numbers(list(t, echeck.ListParams{Limit: 100, Sort: "number", Direction: "DESC"}))
			slices.Reverse(desc)
			if !slices.Equal(desc, asc) {
				t.Errorf("sort=number DESC is not the reverse of ASC: %v", desc)
			}
			top := list(t, echeck.ListParams{Limit: 3, Sort: "number"}) // direction defaults to DESC
			if got := numbers(top); !slices.Equal(got, []int{122, 121, 120}) {
				t.Errorf("sort=number, default direction, limit 3: %v, want [122 121 120]", got)
			}
			var names []string
			for _, ch := range list(t, echeck.ListParams{Limit: 100, Sort: "name", Direction: "ASC"}).Checks {
				names = append(names, ch.Name)
			}
			if !slices.IsSorted(names) || len(names) != pageTotal {
				t.Errorf("sort=name ASC: %v", names)
			}
			wantDays(t, f, list(t, echeck.ListParams{Limit: 100, Sort: "date", Direction: "ASC"}).Checks, false)
			wantDays(t, f, list(t, echeck.ListParams{Limit: 100, Sort: "date", Direction: "DESC"}).Checks, true)
			_, err := c.ListChecks(ctx, echeck.ListParams{Sort: "amount"})
			apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "sort")
			_, err = c.ListChecks(ctx, echeck.ListParams{Direction: "SIDEWAYS"})
			apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "direction")
		})

		t.Run("date range", func(t *testing.T) {
			cases := []struct {
				from, to string
				n        int
			}{
				{f.days[1], "", 15},
				{"", f.days[1], 16},
				{f.days[1], f.days[1], 8},
				{f.days[0], f.days[2], pageTotal},
				{f.days[2], f.days[2], 7},
			}
			for _, tc := range cases {
				pg := list(t, echeck.ListParams{Limit: 100, FromDate: tc.from, ToDate: tc.to})
				if pg.Total != tc.n || len(pg.Checks) != tc.n {
					t.Errorf("from %q to %q: total %d with %d checks, want %d", tc.from, tc.to, pg.Total, len(pg.Checks), tc.n)
				}
				for _, ch := range pg.Checks {
					d := f.days[f.day[ch.CheckID]]
					if (tc.from != "" && d < tc.from) || (tc.to != "" && d > tc.to) {
						t.Errorf("from %q to %q: check of %s listed", tc.from, tc.to, d)
					}
				}
			}
		})

		t.Run("label", func(t *testing.T) {
			other := list(t, echeck.ListParams{Label: "other"})
			paging(t, other, 1, 1, 15, 2, 2)
			for _, ch := range other.Checks {
				if ch.Label != "other" {
					t.Errorf("label filter other lists a check labelled %q", ch.Label)
				}
			}
			none := list(t, echeck.ListParams{Label: "no-such-label"})
			if none.Total != 0 || len(none.Checks) != 0 {
				t.Errorf("unknown label: %+v with %d checks", none.Paging, len(none.Checks))
			}
			all, err := c.ListChecks(ctx, echeck.ListParams{Limit: 100})
			if err != nil {
				t.Fatalf("ListChecks: %v", err)
			}
			if all.Total != pageTotal+2 {
				t.Errorf("unfiltered total %d, want %d", all.Total, pageTotal+2)
			}
			// In quirks mode the filter finds every label that contains
			// the text, in any case (spec 2.1: "find similar checks").
			for q, n := range map[string]int{"PAGE": pageTotal, "Pag": pageTotal, "the": 2, "OTHER": 2, "a": pageTotal} {
				pg := list(t, echeck.ListParams{Label: q, Limit: 100})
				want := 0
				if e.quirks {
					want = n
				}
				if pg.Total != want || len(pg.Checks) != want {
					t.Errorf("label %q: total %d with %d checks, want %d (quirks %v)", q, pg.Total, len(pg.Checks), want, e.quirks)
				}
			}
			_, err = c.ListChecks(ctx, echeck.ListParams{Label: rep("l", 129)})
			apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "label")
			if _, err := c.ListChecks(ctx, echeck.ListParams{Label: rep("l", 128)}); err != nil {
				t.Errorf("label of 128 characters: %v", err)
			}
		})

		// The exact sandbox writes every paging number as a string (spec
		// 2.7); the quirks mode writes some as numbers, alternating with
		// the page (public-api-notes: "Paging numbers may come as strings
		// or numbers"). The client reads both.
		t.Run("envelope numbers", func(t *testing.T) {
			kinds := map[string]map[bool]bool{}
			for page := 1; page <= 3; page++ {
				r := e.raw(http.MethodGet, fmt.Sprintf("/v1/check/list?label=page&limit=10&page=%d", page), keyA, nil)
				if r.status != http.StatusOK {
					t.Fatalf("HTTP %d %s", r.status, r.body)
				}
				l := r.obj("list")
				// from and to are the pages before and after the current one.
				want := map[string]string{"current_page": strconv.Itoa(page), "last_page": "3", "per_page": "10",
					"total": "23", "from": strconv.Itoa(page - 1), "to": strconv.Itoa((page + 1) % 4)}
				for k, w := range want {
					got, isNum := e.pagingText(t, l[k])
					if got != w {
						t.Errorf("page %d: list.%s = %#v, want %s", page, k, l[k], w)
					}
					if kinds[k] == nil {
						kinds[k] = map[bool]bool{}
					}
					kinds[k][isNum] = true
				}
				if data, _ := l["data"].([]any); len(data) != min(10, pageTotal-10*(page-1)) {
					t.Errorf("page %d: list.data holds %d entries", page, len(data))
				}
				pg := list(t, echeck.ListParams{Limit: 10, Page: page})
				paging(t, pg, page, 3, 10, pageTotal, min(10, pageTotal-10*(page-1)))
			}
			for k, seen := range kinds {
				if e.quirks && len(seen) != 2 {
					t.Errorf("quirks mode: list.%s came in one form only over three pages", k)
				}
			}
		})
	})
}

// wantDays asserts that checks are ordered by creation day, newest first
// when desc.
func wantDays(t *testing.T, f listFixture, checks []echeck.Check, desc bool) {
	t.Helper()
	for i := 1; i < len(checks); i++ {
		a, b := f.day[checks[i-1].CheckID], f.day[checks[i].CheckID]
		if (desc && a < b) || (!desc && a > b) {
			t.Errorf("entries %d and %d out of date order (days %d, %d; desc %v)", i-1, i, a, b, desc)
		}
	}
}
