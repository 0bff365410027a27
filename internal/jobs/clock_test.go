package jobs

import (
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
)

// ClockOn stands at noon of the day in the zone given, whatever the day's
// own time and zone, and never goes back.
func TestClockOnStandsAtNoonOfTheDay(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	now := ClockOn(clocktest.NewYearsEve, ny) // 23:59 UTC on 31 December
	first := now()
	if want := time.Date(2026, 12, 31, 12, 0, 0, 0, ny); first.Before(want) || first.Sub(want) > time.Minute || first.Location() != ny {
		t.Fatalf("ClockOn(%v) reads %v, want just after %v", clocktest.NewYearsEve, first, want)
	}
	if second := now(); second.Before(first) {
		t.Fatalf("the clock went back: %v then %v", first, second)
	}
}
