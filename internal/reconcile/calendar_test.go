package reconcile

import "testing"

// The calendar itself is tested day by day in internal/calendar; this
// checks that reconcile's Dates reach it unchanged.
func TestFederalReserveBusinessDays(t *testing.T) {
	c := FederalReserveCalendar()
	for _, d := range []struct {
		date     Date
		business bool
		why      string
	}{
		{Date{2026, 11, 26}, false, "Thanksgiving"},
		{Date{2026, 11, 27}, true, "the day after Thanksgiving is not a Reserve Bank holiday"},
		{Date{2026, 7, 3}, true, "Independence Day on a Saturday is not moved to Friday"},
		{Date{2027, 7, 5}, false, "Independence Day on a Sunday is observed on Monday"},
		{Date{2026, 3, 7}, false, "a Saturday"},
		{Date{2026, 3, 9}, true, "a plain Monday"},
	} {
		if got := c.IsBusinessDay(d.date); got != d.business {
			t.Errorf("%s (%s): business day %v, want %v", d.date, d.why, got, d.business)
		}
	}
	for _, b := range []struct {
		from, to Date
		want     int
		why      string
	}{
		{Date{2026, 3, 2}, Date{2026, 3, 5}, 2, "Mon to Thu: Tue and Wed"},
		{Date{2026, 11, 25}, Date{2026, 12, 4}, 5, "Thanksgiving in between, one more day"},
		{Date{2026, 3, 9}, Date{2026, 3, 2}, 0, "backwards"},
	} {
		if got := c.BusinessDaysBetween(b.from, b.to); got != b.want {
			t.Errorf("%s to %s (%s): %d business days, want %d", b.from, b.to, b.why, got, b.want)
		}
	}
}

func TestDates(t *testing.T) {
	d, err := ParseDate("2024-02-28")
	if err != nil {
		t.Fatal(err)
	}
	if got := d.AddDays(1).String(); got != "2024-02-29" {
		t.Errorf("leap day: %s", got)
	}
	if got := d.AddDays(2).String(); got != "2024-03-01" {
		t.Errorf("after leap day: %s", got)
	}
	if _, err := ParseDate("2024-13-01"); err == nil {
		t.Error("month 13 accepted")
	}
	w := Window{Date{2026, 3, 1}, Date{2026, 3, 31}}
	if !w.Contains(Date{2026, 3, 1}) || !w.Contains(Date{2026, 3, 31}) || w.Contains(Date{2026, 4, 1}) {
		t.Error("window ends are inclusive")
	}
}
