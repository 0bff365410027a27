package calendar

import (
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
)

// closed2026to2028 is every Federal Reserve Bank closure on a weekday in
// 2026 to 2028, written out by hand from the Board's rule: a holiday on a
// Sunday is observed the Monday after; one on a Saturday is not moved
// (the Banks open the Friday before). The weekend holidays it leaves out
// on purpose: Independence Day 2026-07-04 (Sat), Juneteenth 2027-06-19
// (Sat), Christmas 2027-12-25 (Sat), New Year's Day 2028-01-01 (Sat),
// Veterans Day 2028-11-11 (Sat).
var closed2026to2028 = map[string]string{
	"2026-01-01": "New Year's Day",
	"2026-01-19": "Martin Luther King Jr. Day",
	"2026-02-16": "Washington's Birthday",
	"2026-05-25": "Memorial Day",
	"2026-06-19": "Juneteenth",
	"2026-09-07": "Labor Day",
	"2026-10-12": "Columbus Day",
	"2026-11-11": "Veterans Day",
	"2026-11-26": "Thanksgiving Day",
	"2026-12-25": "Christmas Day",
	"2027-01-01": "New Year's Day",
	"2027-01-18": "Martin Luther King Jr. Day",
	"2027-02-15": "Washington's Birthday",
	"2027-05-31": "Memorial Day",
	"2027-07-05": "Independence Day (Sunday 4 July, observed Monday)",
	"2027-09-06": "Labor Day",
	"2027-10-11": "Columbus Day",
	"2027-11-11": "Veterans Day",
	"2027-11-25": "Thanksgiving Day",
	"2028-01-17": "Martin Luther King Jr. Day",
	"2028-02-21": "Washington's Birthday",
	"2028-05-29": "Memorial Day",
	"2028-06-19": "Juneteenth",
	"2028-07-04": "Independence Day",
	"2028-09-04": "Labor Day",
	"2028-10-09": "Columbus Day",
	"2028-11-23": "Thanksgiving Day",
	"2028-12-25": "Christmas Day",
}

// Every day of 2026 to 2028 is a business day exactly when it is a weekday
// not in the table.
func TestEveryDayOf2026To2028(t *testing.T) {
	c := FederalReserve()
	for day, why := range closed2026to2028 {
		d, _ := time.Parse(time.DateOnly, day)
		if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday {
			t.Errorf("table: %s (%s) is a %v; list only weekday closures", day, why, wd)
		}
	}
	closures := 0
	for d := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 2029; d = d.AddDate(0, 0, 1) {
		why, closed := closed2026to2028[d.Format(time.DateOnly)]
		wd := d.Weekday()
		want := wd != time.Saturday && wd != time.Sunday && !closed
		if got := c.IsBusinessDay(d); got != want {
			t.Errorf("%s (%v%s): business day %v, want %v", d.Format(time.DateOnly), wd, " "+why, got, want)
		}
		if closed {
			closures++
		}
	}
	if closures != len(closed2026to2028) {
		t.Errorf("walked %d closures, table has %d", closures, len(closed2026to2028))
	}
}

// The weekend-holiday rule, spelled out, including years outside the
// table.
func TestWeekendHolidays(t *testing.T) {
	c := FederalReserve()
	for _, tc := range []struct {
		day      string
		business bool
		why      string
	}{
		{"2026-07-03", true, "Independence Day on a Saturday is not moved to Friday"},
		{"2027-12-24", true, "Christmas on a Saturday is not moved to Friday"},
		{"2027-12-31", true, "New Year's Day 2028 on a Saturday is not moved to Friday"},
		{"2027-07-05", false, "Independence Day on a Sunday is observed on Monday"},
		{"2023-01-02", false, "New Year's Day on a Sunday is observed on Monday"},
		{"2022-06-20", false, "Juneteenth 2022 on a Sunday, observed Monday"},
		{"2021-06-18", true, "Juneteenth was not yet a Reserve Bank holiday in 2021"},
		{"2026-11-27", true, "the day after Thanksgiving is not a Reserve Bank holiday"},
		{"2026-12-24", true, "Christmas Eve is not a Reserve Bank holiday"},
	} {
		d, _ := time.Parse(time.DateOnly, tc.day)
		if got := c.IsBusinessDay(d); got != tc.business {
			t.Errorf("%s (%s): business day %v, want %v", tc.day, tc.why, got, tc.business)
		}
	}
}

// Only the date in the day's own location counts, not the instant.
func TestTheDayIsReadInItsOwnLocation(t *testing.T) {
	c := FederalReserve()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	// 02:00 UTC on Friday 27 November is still Thanksgiving in New York.
	at := time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)
	if !c.IsBusinessDay(at) || c.IsBusinessDay(at.In(ny)) {
		t.Errorf("%v: business day in UTC %v, in New York %v; want true, false", at, c.IsBusinessDay(at), c.IsBusinessDay(at.In(ny)))
	}
}

func TestBusinessDaysBetween(t *testing.T) {
	c := FederalReserve()
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	for _, b := range []struct {
		from, to string
		want     int
		why      string
	}{
		{"2026-03-02", "2026-03-02", 0, "the same day"},
		{"2026-03-02", "2026-03-03", 0, "the next day is not over"},
		{"2026-03-02", "2026-03-05", 2, "Mon to Thu: Tue and Wed"},
		{"2026-03-02", "2026-03-09", 4, "a weekend in between"},
		{"2026-03-06", "2026-03-09", 0, "Fri to Mon"},
		{"2026-11-25", "2026-12-03", 4, "Thanksgiving in between"},
		{"2026-12-23", "2027-01-04", 5, "Christmas and New Year in between"},
		{"2026-03-09", "2026-03-02", 0, "backwards"},
	} {
		if got := c.BusinessDaysBetween(day(b.from), day(b.to)); got != b.want {
			t.Errorf("%s to %s (%s): %d business days, want %d", b.from, b.to, b.why, got, b.want)
		}
	}
}

// AddBusinessDays on the pinned dates, with answers worked out by hand.
func TestAddBusinessDays(t *testing.T) {
	c := FederalReserve()
	for _, tc := range []struct {
		from time.Time
		n    int
		want string
		why  string
	}{
		{clocktest.Monday, 3, "2026-03-05", "Mon + 3: Thu"},
		{clocktest.Friday, 3, "2026-03-11", "Fri + 3: Wed, over the weekend"},
		{clocktest.BeforeThanksgiving, 3, "2026-12-01", "Wed 25 Nov + 3: Fri 27, Mon 30, Tue 1 Dec"},
		{clocktest.ChristmasEve, 3, "2026-12-30", "Thu 24 Dec + 3: Mon 28, Tue 29, Wed 30"},
		{clocktest.NewYearsEve, 3, "2027-01-06", "Thu 31 Dec + 3: Mon 4, Tue 5, Wed 6 (1 Jan closed)"},
		{clocktest.DSTChange, 3, "2026-03-11", "Sun 8 Mar + 3: Mon, Tue, Wed"},
		{time.Date(2027, 7, 2, 9, 0, 0, 0, time.UTC), 1, "2027-07-06", "Fri before the observed Monday 5 July"},
		{clocktest.Monday, 0, "2026-03-02", "zero: the day itself"},
		{clocktest.Monday, -1, "2026-02-27", "back over the weekend"},
		{time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), -1, "2026-11-27", "back over the weekend, the Friday after Thanksgiving is open"},
	} {
		got := c.AddBusinessDays(tc.from, tc.n)
		if got.Format(time.DateOnly) != tc.want || got.Hour() != 0 || got.Minute() != 0 || got.Location() != tc.from.Location() {
			t.Errorf("%s + %d (%s) = %v, want midnight of %s", tc.from.Format(time.DateOnly), tc.n, tc.why, got, tc.want)
		}
	}
}
