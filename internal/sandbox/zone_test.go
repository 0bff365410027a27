package sandbox

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// A sandbox in US Eastern time dates a check created at 00:30 UTC on the
// previous day, and its list's from_date/to_date select Eastern days, so
// that batchd's lookups meet a service whose calendar is not UTC's.
func TestZoneDatesChecksAndListFilter(t *testing.T) {
	eastern, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatalf("load America/New_York: %v", err)
	}
	h := newHarness(t, Options{Location: eastern})
	h.clock.Add(14*time.Hour + 30*time.Minute) // Tuesday 3 March 00:30 UTC: Monday 19:30 in New York
	c := h.create(keyA, map[string]any{"label": "zone"})
	if got, want := c["date"], "2026-03-02 19:30:00"; got != want {
		t.Errorf("date %v, want %v (Eastern wall time)", got, want)
	}
	if got, want := c["authorization_date"], "2026-03-02"; got != want {
		t.Errorf("authorization_date %v, want %v (Eastern day)", got, want)
	}
	for query, n := range map[string]string{
		"from_date=2026-03-02&to_date=2026-03-02": "1",
		"from_date=2026-03-03":                    "0",
		"to_date=2026-03-01":                      "0",
		"from_date=2026-03-01":                    "1",
		"to_date=2026-03-02":                      "1",
	} {
		r := h.get("/v1/check/list?"+query, keyA)
		wantStatus(t, r, http.StatusOK)
		if got := r.list()["total"]; got != n {
			t.Errorf("%s: total %v, want %s", query, got, n)
		}
	}
	// An authorization date of the Eastern day is today, not the future;
	// the UTC day (3 March) is still the future there.
	r := h.post("/v1/check/create", keyA, with(map[string]any{"authorization_date": "2026-03-03"}))
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.raw), "future") {
		t.Errorf("authorization_date of the UTC day: %d %s, want 400 in the future", r.status, r.raw)
	}
}

// The key's clock moves behind the real one and back ahead by date, and
// a start Date names the service's day in its zone.
func TestClockDateBehindAndAheadInZone(t *testing.T) {
	eastern, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatalf("load America/New_York: %v", err)
	}
	// Monday 10:00 UTC + 14h30 = Tuesday 00:30 UTC, Monday in New York.
	h := newHarness(t, Options{Location: eastern, Date: time.Date(2026, 2, 27, 0, 0, 0, 0, time.UTC)})
	h.clock.Add(14*time.Hour + 30*time.Minute)
	if got := h.create(keyA, nil)["date"]; got != "2026-02-27 19:30:00" {
		t.Errorf("date on the start day %v, want 2026-02-27 19:30:00", got)
	}
	for _, day := range []string{"2026-02-26", "2026-03-05"} {
		r := h.post("/_sandbox/clock", keyA, map[string]any{"date": day})
		wantStatus(t, r, http.StatusOK)
		if got, _ := r.body["now"].(string); !strings.HasPrefix(got, day+" 19:30") {
			t.Errorf("clock set to %s answers %q", day, got)
		}
	}
}

// StartDays starts the key's clock a fixed number of days from the real
// one, ahead or behind, and the distance holds across the real midnight.
func TestStartDays(t *testing.T) {
	for days, want := range map[int]string{-3: "2026-02-27 23:50:00", 1: "2026-03-03 23:50:00"} {
		h := newHarness(t, Options{StartDays: days})
		h.clock.Add(13*time.Hour + 50*time.Minute) // 23:50 UTC on the real Monday
		if got := h.create(keyA, nil)["date"]; got != want {
			t.Errorf("StartDays %d: date %v, want %s", days, got, want)
		}
		h.clock.Add(20 * time.Minute) // the real day turns; the distance stays
		wantNext := map[int]string{-3: "2026-02-28 00:10:00", 1: "2026-03-04 00:10:00"}[days]
		if got := h.create(keyA, nil)["date"]; got != wantNext {
			t.Errorf("StartDays %d after midnight: date %v, want %s", days, got, wantNext)
		}
	}
}
