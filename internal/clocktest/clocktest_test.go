package clocktest

import (
	"testing"
	"time"
)

func TestClockMovesOnlyWhenTold(t *testing.T) {
	c := New(Monday)
	if !c.Now().Equal(Monday) || !c.Now().Equal(Monday) {
		t.Fatalf("clock moved by itself: %v", c.Now())
	}
	if got := c.Advance(36 * time.Hour); !got.Equal(Monday.Add(36*time.Hour)) || !c.Now().Equal(got) {
		t.Fatalf("advance: %v", got)
	}
	c.Set(Friday)
	if !c.Now().Equal(Friday) {
		t.Fatalf("set: %v", c.Now())
	}
}

func TestPinnedDatesAreWhatTheirNamesSay(t *testing.T) {
	for _, tc := range []struct {
		at   time.Time
		want time.Weekday
	}{{Monday, time.Monday}, {Friday, time.Friday}, {BeforeThanksgiving, time.Wednesday},
		{ChristmasEve, time.Thursday}, {NewYearsEve, time.Thursday}, {DSTChange, time.Sunday}} {
		if tc.at.Weekday() != tc.want {
			t.Errorf("%v is a %v, want %v", tc.at, tc.at.Weekday(), tc.want)
		}
	}
	ny, _ := time.LoadLocation("America/New_York")
	start := time.Date(2026, 3, 8, 0, 0, 0, 0, ny)
	if h := start.AddDate(0, 0, 1).Sub(start); h != 23*time.Hour {
		t.Errorf("DST change day in New York lasts %v, want 23h", h)
	}
	if len(Dates()) != 6 {
		t.Errorf("Dates() = %d dates", len(Dates()))
	}
}
