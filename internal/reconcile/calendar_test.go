package reconcile

import "testing"

func TestFederalReserveBusinessDays(t *testing.T) {
	c := FederalReserveCalendar()
	days := []struct {
		date     Date
		business bool
		why      string
	}{
		{Date{2026, 11, 26}, false, "Thanksgiving"},
		{Date{2026, 11, 27}, true, "the day after Thanksgiving is not a Reserve Bank holiday"},
		{Date{2026, 7, 3}, true, "Independence Day on a Saturday is not moved to Friday"},
		{Date{2027, 7, 5}, false, "Independence Day on a Sunday is observed on Monday"},
		{Date{2027, 12, 24}, true, "Christmas on a Saturday is not moved to Friday"},
		{Date{2027, 12, 31}, true, "New Year's Day 2028 on a Saturday is not moved to Friday"},
		{Date{2023, 1, 2}, false, "New Year's Day on a Sunday is observed on Monday"},
		{Date{2026, 6, 19}, false, "Juneteenth"},
		{Date{2021, 6, 18}, true, "Juneteenth was not yet a Reserve Bank holiday in 2021"},
		{Date{2022, 6, 20}, false, "Juneteenth 2022 on a Sunday, observed Monday"},
		{Date{2026, 10, 12}, false, "Columbus Day"},
		{Date{2026, 11, 11}, false, "Veterans Day"},
		{Date{2026, 1, 19}, false, "Martin Luther King Jr. Day"},
		{Date{2026, 2, 16}, false, "Washington's Birthday"},
		{Date{2026, 5, 25}, false, "Memorial Day"},
		{Date{2026, 9, 7}, false, "Labor Day"},
		{Date{2026, 3, 7}, false, "a Saturday"},
		{Date{2026, 3, 8}, false, "a Sunday"},
		{Date{2026, 3, 9}, true, "a plain Monday"},
	}
	for _, d := range days {
		if got := c.IsBusinessDay(d.date); got != d.business {
			t.Errorf("%s (%s): business day %v, want %v", d.date, d.why, got, d.business)
		}
	}
	between := []struct {
		from, to Date
		want     int
		why      string
	}{
		{Date{2026, 3, 2}, Date{2026, 3, 2}, 0, "the same day"},
		{Date{2026, 3, 2}, Date{2026, 3, 3}, 0, "the next day is not over"},
		{Date{2026, 3, 2}, Date{2026, 3, 5}, 2, "Mon to Thu: Tue and Wed"},
		{Date{2026, 3, 2}, Date{2026, 3, 9}, 4, "a weekend in between"},
		{Date{2026, 3, 6}, Date{2026, 3, 9}, 0, "Fri to Mon"},
		{Date{2026, 11, 25}, Date{2026, 12, 3}, 4, "Thanksgiving in between"},
		{Date{2026, 11, 25}, Date{2026, 12, 4}, 5, "Thanksgiving in between, one more day"},
		{Date{2026, 12, 23}, Date{2027, 1, 4}, 5, "Christmas and New Year in between"},
		{Date{2026, 3, 9}, Date{2026, 3, 2}, 0, "backwards"},
	}
	for _, b := range between {
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
