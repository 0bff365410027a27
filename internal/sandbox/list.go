package sandbox

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
)

// List paging limits of spec section 8.
const (
	defaultLimit = 15
	maxLimit     = 100
	maxFilter    = 128 // label, link_id, search
)

// listQuery is a validated list request.
type listQuery struct {
	limit, page int64
	sort        string // one of the endpoint's sort keys, lower case
	desc        bool
	from, to    time.Time // creation date range, inclusive; zero when open
}

// readListQuery reads limit, page, sort and direction (or their aliases
// $limit, $sort, $direction when the plain name is absent) and the
// from_date/to_date range. sorts are the endpoint's sort keys; the first
// is the default.
func readListQuery(q params, sorts ...string) (listQuery, *apiError) {
	aliased := url.Values{}
	for k, v := range q.form {
		aliased[k] = v
	}
	for _, name := range []string{"limit", "sort", "direction"} {
		if _, ok := aliased[name]; !ok {
			if v, ok := aliased["$"+name]; ok {
				aliased[name] = v
			}
		}
	}
	f := &fields{p: params{form: aliased}}
	lq := listQuery{limit: defaultLimit, page: 1, sort: sorts[0], desc: true}
	if n, ok := f.integer("limit", 1, maxLimit); ok {
		lq.limit = n
	}
	if n, ok := f.integer("page", 1, 1<<62); ok {
		lq.page = n
	}
	if s := strings.ToLower(f.text("sort", false, 64)); s != "" {
		if !slices.Contains(sorts, s) {
			f.fail("sort", "must be one of %s", strings.Join(sorts, ", "))
		}
		lq.sort = s
	}
	switch d := strings.ToUpper(f.text("direction", false, 64)); d {
	case "", "DESC":
	case "ASC":
		lq.desc = false
	default:
		f.fail("direction", "must be ASC or DESC")
	}
	lq.from, _ = f.date("from_date")
	lq.to, _ = f.date("to_date")
	if f.err == nil && !lq.from.IsZero() && !lq.to.IsZero() && lq.to.Before(lq.from) {
		f.fail("to_date", "must not be before from_date")
	}
	if f.err != nil {
		return listQuery{}, f.err
	}
	return lq, nil
}

// listPage is the paging part of the list envelope (spec 2.7), numbers as
// strings (in quirks mode some as numbers, see mixPaging). from and to are
// the previous and next page numbers, "0" when there is none; last_page is
// at least 1.
type listPage struct {
	CurrentPage pageNum `json:"current_page"`
	From        pageNum `json:"from"`
	To          pageNum `json:"to"`
	LastPage    pageNum `json:"last_page"`
	PerPage     pageNum `json:"per_page"`
	Total       pageNum `json:"total"`
	Data        any     `json:"data"`
}

// listEnvelope answers the list endpoints.
type listEnvelope struct {
	okBody
	List listPage `json:"list"`
}

// paginate returns the index range [lo, hi) of the requested page among
// total items and its paging fields. A page past the end is empty.
func paginate(total int, limit, page int64) (lo, hi int, lp listPage) {
	t := int64(total)
	last := max(1, (t+limit-1)/limit)
	lo, hi = total, total
	if page <= last {
		lo = int((page - 1) * limit)
		hi = int(min(t, (page-1)*limit+limit))
	}
	prev, next := int64(0), int64(0)
	if page > 1 {
		prev = page - 1
	}
	if page < last {
		next = page + 1
	}
	f := func(n int64) pageNum { return pageNum{n: n} }
	return lo, hi, listPage{CurrentPage: f(page), From: f(prev), To: f(next), LastPage: f(last), PerPage: f(limit), Total: f(t)}
}

// listChecks serves GET /v1/check/list. Checks are kept in creation order,
// so the default date sort is a walk of that slice, a date range is a
// binary search, and a label filter starts from the label's own index (in
// quirks mode, a walk of every check: see quirkLabelFilter); only
// sort=number and sort=name sort (the filtered checks).
func (s *Server) listChecks(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	q, aerr := readQuery(r)
	if aerr != nil {
		return aerr
	}
	lq, aerr := readListQuery(q, "date", "number", "name")
	if aerr != nil {
		return aerr
	}
	f := &fields{p: q}
	label := f.text("label", false, maxFilter)
	linkID := f.text("link_id", false, maxFilter)
	if f.err != nil {
		return f.err
	}
	s.lockSettled(ks)
	base := ks.checks
	switch {
	case label != "" && s.opts.Quirks:
		base = quirkLabelFilter(base, label)
	case label != "":
		base = ks.byLabel[label]
	}
	base = byDateRange(base, s.localDay(lq.from), s.localDay(lq.to))
	if linkID != "" {
		base = slices.DeleteFunc(slices.Clone(base), func(c *check) bool { return c.linkID != linkID })
	}
	if lq.sort != "date" {
		base = sortChecks(base, lq.sort)
	}
	lp := pageOf(base, lq, s.render)
	ks.mu.Unlock()
	s.writeList(w, "Checks found", lp, lq.page)
	return nil
}

// pageOf is the page lq asks for of items (in ascending order; read
// backwards for DESC), each rendered by render, with its paging fields.
func pageOf[T, V any](items []T, lq listQuery, render func(T) V) listPage {
	lo, hi, lp := paginate(len(items), lq.limit, lq.page)
	views := make([]V, 0, hi-lo)
	for i := lo; i < hi; i++ {
		j := i
		if lq.desc {
			j = len(items) - 1 - i
		}
		views = append(views, render(items[j]))
	}
	lp.Data = views
	return lp
}

// writeList answers a list page in the list envelope, with message msg; in
// quirks mode some paging numbers are written as numbers.
func (s *Server) writeList(w http.ResponseWriter, msg string, lp listPage, page int64) {
	if s.opts.Quirks {
		lp.mixPaging(page)
	}
	writeJSON(w, http.StatusOK, listEnvelope{ok(msg), lp})
}

// zone is the service's time zone (Options.Location), UTC by default.
func (s *Server) zone() *time.Location {
	if s.opts.Location == nil {
		return time.UTC
	}
	return s.opts.Location
}

// realDay is the real clock's calendar day in the service's time zone,
// as a UTC midnight: the day Options.Date and a clock's date are counted
// from, so that they name the service's day.
func (s *Server) realDay() time.Time {
	y, m, d := s.now().In(s.zone()).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// localDay is the start of day d (a date read as UTC midnight) in the
// service's time zone, so that a from_date/to_date filter selects the
// service's calendar days; the zero time stays zero (an open bound).
func (s *Server) localDay(d time.Time) time.Time {
	if d.IsZero() {
		return d
	}
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, s.zone())
}

// byDateRange narrows creation-ordered checks to creation dates in
// [from, to], both inclusive days starting at from's and to's instants
// (localDay); zero bounds are open.
func byDateRange(cs []*check, from, to time.Time) []*check {
	lo, hi := 0, len(cs)
	if !from.IsZero() {
		lo = sort.Search(len(cs), func(i int) bool { return !cs[i].created.Before(from) })
	}
	if !to.IsZero() {
		end := to.AddDate(0, 0, 1)
		hi = sort.Search(len(cs), func(i int) bool { return !cs[i].created.Before(end) })
	}
	if hi < lo {
		hi = lo
	}
	return cs[lo:hi]
}

// sortChecks returns a sorted copy of cs, ascending by check number
// (numerically) or by name (case-insensitively), ties in creation order.
func sortChecks(cs []*check, by string) []*check {
	type keyed struct {
		key string
		c   *check
	}
	ks := make([]keyed, len(cs))
	for i, c := range cs {
		k := strings.ToLower(c.in.Name)
		if by == "number" {
			k = strings.TrimLeft(c.in.Number, "0")
			k = strings.Repeat("0", max(0, 10-len(k))) + k
		}
		ks[i] = keyed{k, c}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		return cmp.Or(strings.Compare(a.key, b.key), cmp.Compare(a.c.seq, b.c.seq))
	})
	out := make([]*check, len(ks))
	for i, k := range ks {
		out[i] = k.c
	}
	return out
}
