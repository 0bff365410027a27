package jobs

import "time"

// ClockOn returns a clock for rehearsing a day (`--date`): it stands at
// noon on day's date in loc when made and then runs at the wall clock's
// pace (by the monotonic clock, so a change of the system time does not
// move it). Time passes, so ingest's stable_for waits end as usual, while
// the date stays day's for twelve hours whatever the hour it is started.
func ClockOn(day time.Time, loc *time.Location) func() time.Time {
	y, m, d := day.Date()
	start := time.Date(y, m, d, 12, 0, 0, 0, loc)
	made := time.Now()
	return func() time.Time { return start.Add(time.Since(made)) }
}
