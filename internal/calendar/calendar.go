// Package calendar is batchd's one business-day calendar: Monday to
// Friday, less the holidays the Federal Reserve Banks observe, because
// checks clear through them. Reconcile counts a check's age on it,
// onboarding counts a verification's, and the emulator (internal/sandbox)
// moves a check on by it, so that batchd and the emulator never disagree
// on whether a day counts.
package calendar

import (
	"time"

	"github.com/rickar/cal/v2"
	"github.com/rickar/cal/v2/us"
)

// Calendar counts business days. It is safe for concurrent use.
//
// Every method takes a day as a time.Time and uses only its date in its
// own location (t.Date()), so a caller picks the zone a day is read in
// (the service's UTC, schedule.timezone) before calling.
type Calendar struct {
	bc *cal.BusinessCalendar
}

// fedObserved is the Federal Reserve's rule for a holiday on a weekend:
// one on a Sunday is observed on the Monday, but one on a Saturday is not
// moved, as the Reserve Banks are open the Friday before. (rickar/cal's us
// package moves Saturday holidays to Friday, the rule for federal
// employees, so its holidays are cloned with this rule.)
var fedObserved = []cal.AltDay{{Day: time.Sunday, Offset: 1}}

// FederalReserve returns the calendar of the eleven Federal Reserve Bank
// holidays. Juneteenth counts from 2022, its first year of Reserve Bank
// closure.
func FederalReserve() *Calendar {
	bc := cal.NewBusinessCalendar()
	// Cacheable stays false: the cache is a map written on reads, which
	// would make the calendar unsafe for concurrent use.
	for _, h := range []*cal.Holiday{
		us.NewYear, us.MlkDay, us.PresidentsDay, us.MemorialDay, us.IndependenceDay,
		us.LaborDay, us.ColumbusDay, us.VeteransDay, us.ThanksgivingDay, us.ChristmasDay,
	} {
		bc.AddHoliday(h.Clone(&cal.Holiday{Observed: fedObserved}))
	}
	bc.AddHoliday(us.Juneteenth.Clone(&cal.Holiday{Observed: fedObserved, StartYear: 2022}))
	return &Calendar{bc: bc}
}

// IsBusinessDay reports whether day's date is a weekday that is not an
// observed holiday.
func (c *Calendar) IsBusinessDay(day time.Time) bool {
	return c.bc.IsWorkday(noon(day))
}

// BusinessDaysBetween counts the business days strictly after from's date
// and strictly before to's: the whole business days that have passed
// between a check created on from and a run on to, today not being over
// yet. It is zero when to is not after from.
func (c *Calendar) BusinessDaysBetween(from, to time.Time) int {
	n := 0
	end := noon(to)
	for d := noon(from).AddDate(0, 0, 1); d.Before(end); d = d.AddDate(0, 0, 1) {
		if c.IsBusinessDay(d) {
			n++
		}
	}
	return n
}

// AddBusinessDays returns the start (midnight, in day's location) of the
// n-th business day after day's date, or before it for a negative n; for
// n = 0, the start of day's date itself. A check created on day has been
// k whole business days old from AddBusinessDays(day, k+1) on.
func (c *Calendar) AddBusinessDays(day time.Time, n int) time.Time {
	d, step := noon(day), 1
	if n < 0 {
		n, step = -n, -1
	}
	for n > 0 {
		d = d.AddDate(0, 0, step)
		if c.IsBusinessDay(d) {
			n--
		}
	}
	y, m, dd := d.Date()
	return time.Date(y, m, dd, 0, 0, 0, 0, day.Location())
}

// noon is day's date at noon UTC: a time that no zone arithmetic moves to
// another day, and the form the holiday rules are evaluated on.
func noon(day time.Time) time.Time {
	y, m, d := day.Date()
	return time.Date(y, m, d, 12, 0, 0, 0, time.UTC)
}
