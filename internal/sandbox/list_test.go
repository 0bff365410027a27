package sandbox

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// seedList creates seven checks one second apart, with names and numbers
// out of creation order, and returns their ids in creation order.
func seedList(h *harness) []string {
	names := []string{"carol", "Alice", "bob", "dave", "erin", "frank", "Grace"}
	numbers := []string{"30", "9", "100", "2", "55", "10", "7"}
	ids := make([]string, len(names))
	for i := range names {
		label := "odd"
		if i%2 == 1 {
			label = "even"
		}
		ids[i] = h.create(keyA, map[string]any{"name": names[i], "number": numbers[i], "label": label})["check_id"].(string)
		h.clock.Add(time.Second)
	}
	return ids
}

// ids of a list answer's data, in order.
func dataIDs(r resp) []string {
	var out []string
	for _, d := range r.data() {
		out = append(out, d.(map[string]any)["check_id"].(string))
	}
	return out
}

// field of each entry of a list answer's data.
func dataField(r resp, name string) string {
	var out []string
	for _, d := range r.data() {
		out = append(out, d.(map[string]any)[name].(string))
	}
	return strings.Join(out, ",")
}

func TestListPaging(t *testing.T) {
	h := newHarness(t, Options{})
	ids := seedList(h)
	cases := []struct {
		query                        string
		current, from, to, last, per string
		total                        string
		want                         []string
	}{
		{"", "1", "0", "0", "1", "15", "7", []string{ids[6], ids[5], ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{"?limit=3", "1", "0", "2", "3", "3", "7", []string{ids[6], ids[5], ids[4]}},
		{"?limit=3&page=2", "2", "1", "3", "3", "3", "7", []string{ids[3], ids[2], ids[1]}},
		{"?limit=3&page=3", "3", "2", "0", "3", "3", "7", []string{ids[0]}},
		{"?limit=3&page=4", "4", "3", "0", "3", "3", "7", nil},
		{"?limit=3&page=999999999999999999", "999999999999999999", "999999999999999998", "0", "3", "3", "7", nil},
		{"?limit=3&direction=ASC", "1", "0", "2", "3", "3", "7", []string{ids[0], ids[1], ids[2]}},
		{"?limit=3&direction=asc&page=3", "3", "2", "0", "3", "3", "7", []string{ids[6]}},
		{"?$limit=2&$direction=ASC", "1", "0", "2", "4", "2", "7", []string{ids[0], ids[1]}},
		{"?limit=1&$limit=2&direction=DESC&$direction=ASC", "1", "0", "2", "7", "1", "7", []string{ids[6]}},
		{"?label=even&direction=ASC", "1", "0", "0", "1", "15", "3", []string{ids[1], ids[3], ids[5]}},
		{"?label=none", "1", "0", "0", "1", "15", "0", nil},
		{"?link_id=" + strings.Repeat("x", 36), "1", "0", "0", "1", "15", "0", nil},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			r := h.get("/v1/check/list"+tc.query, keyA)
			wantStatus(t, r, http.StatusOK)
			l := r.list()
			got := []string{l["current_page"].(string), l["from"].(string), l["to"].(string),
				l["last_page"].(string), l["per_page"].(string), l["total"].(string)}
			want := []string{tc.current, tc.from, tc.to, tc.last, tc.per, tc.total}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("paging %v, want %v", got, want)
			}
			if strings.Join(dataIDs(r), ",") != strings.Join(tc.want, ",") {
				t.Errorf("data %v, want %v", dataIDs(r), tc.want)
			}
			if !strings.Contains(string(r.raw), `"data":[`) {
				t.Errorf("data must be an array, even when empty: %s", r.raw)
			}
		})
	}
}

func TestListSort(t *testing.T) {
	h := newHarness(t, Options{})
	seedList(h)
	cases := []struct{ query, field, want string }{
		{"?sort=number&direction=ASC", "number", "2,7,9,10,30,55,100"},
		{"?sort=number", "number", "100,55,30,10,9,7,2"},
		{"?$sort=number&$direction=asc", "number", "2,7,9,10,30,55,100"},
		{"?sort=name&direction=ASC", "name", "Alice,bob,carol,dave,erin,frank,Grace"},
		{"?sort=NAME&direction=desc&limit=2", "name", "Grace,frank"},
		{"?sort=name&direction=ASC&label=odd", "name", "bob,carol,erin,Grace"},
		{"?sort=date&direction=ASC", "name", "carol,Alice,bob,dave,erin,frank,Grace"},
	}
	for _, tc := range cases {
		r := h.get("/v1/check/list"+tc.query, keyA)
		wantStatus(t, r, http.StatusOK)
		if got := dataField(r, tc.field); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.query, got, tc.want)
		}
	}
}

func TestListDateRange(t *testing.T) {
	h := newHarness(t, Options{})
	// One check on each of 2, 3, 4 and 6 March (sandbox clock).
	for _, advance := range []int{0, 1, 1, 2} {
		if advance > 0 {
			h.advance(keyA, advance)
		}
		h.create(keyA, nil)
	}
	cases := []struct{ query, total string }{
		{"?from_date=2026-03-03", "3"},
		{"?to_date=2026-03-03", "2"},
		{"?from_date=2026-03-03&to_date=2026-03-04", "2"},
		{"?from_date=2026-03-05&to_date=2026-03-05", "0"},
		{"?from_date=2026-03-06&to_date=2026-03-06", "1"},
		{"?from_date=2026-03-07", "0"},
		{"?to_date=2026-03-01", "0"},
	}
	for _, tc := range cases {
		r := h.get("/v1/check/list"+tc.query, keyA)
		wantStatus(t, r, http.StatusOK)
		if got := r.list()["total"]; got != tc.total {
			t.Errorf("%s: total %v, want %s", tc.query, got, tc.total)
		}
	}
	r := h.get("/v1/check/list?from_date=2026-03-03&direction=ASC", keyA)
	if got := dataField(r, "date"); !strings.HasPrefix(got, "2026-03-03 ") {
		t.Errorf("first date in range %s", got)
	}
}

func TestListValidation(t *testing.T) {
	h := newHarness(t, Options{})
	cases := []struct{ query, field string }{
		{"?limit=0", "limit"},
		{"?limit=101", "limit"},
		{"?limit=abc", "limit"},
		{"?$limit=0", "limit"},
		{"?page=0", "page"},
		{"?page=-1", "page"},
		{"?page=1.5", "page"},
		{"?sort=amount", "sort"},
		{"?$sort=status", "sort"},
		{"?direction=up", "direction"},
		{"?from_date=2026-3-1", "from_date"},
		{"?to_date=yesterday", "to_date"},
		{"?from_date=2026-03-05&to_date=2026-03-04", "to_date"},
		{"?label=" + strings.Repeat("l", 129), "label"},
		{"?link_id=" + strings.Repeat("l", 129), "link_id"},
		{"?label=%zz", "query"},
	}
	for _, tc := range cases {
		wantField(t, h.get("/v1/check/list"+tc.query, keyA), tc.field)
	}
	wantStatus(t, h.get("/v1/check/list?limit=100&page=1&unknown=1", keyA), http.StatusOK)
	wantStatus(t, h.get("/v1/check/list?limit=1", keyA), http.StatusOK)
}

func TestListDefaultLimit(t *testing.T) {
	h := newHarness(t, Options{})
	for range 20 {
		h.create(keyA, nil)
	}
	r := h.get("/v1/check/list", keyA)
	if len(r.data()) != 15 || r.list()["last_page"] != "2" || r.list()["to"] != "2" {
		t.Errorf("default page: %d entries, list %v", len(r.data()), r.list()["last_page"])
	}
}
