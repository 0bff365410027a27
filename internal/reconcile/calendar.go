package reconcile

import (
	"time"

	"github.com/rickar/cal/v2"
	"github.com/rickar/cal/v2/us"
)

// Calendar counts business days: Monday to Friday, less the holidays the
// Federal Reserve Banks observe, because checks settle through them.
// It is safe for concurrent use.
type Calendar struct {
	bc *cal.BusinessCalendar
}

// fedObserved is the Federal Reserve's rule for a holiday on a weekend:
// one on a Sunday is observed on the Monday, but one on a Saturday is not
// moved, as the Reserve Banks are open the Friday before. (rickar/cal's us
// package moves Saturday holidays to Friday, the rule for federal
// employees, so its holidays are cloned with this rule.)
var fedObserved = []cal.AltDay{{Day: time.Sunday, Offset: 1}}

// FederalReserveCalendar returns the calendar of the eleven Federal Reserve
// Bank holidays. Juneteenth counts from 2022, its first year of Reserve
// Bank closure.
func FederalReserveCalendar() *Calendar {
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

// IsBusinessDay reports whether d is a weekday that is not an observed
// holiday.
func (c *Calendar) IsBusinessDay(d Date) bool {
	return c.bc.IsWorkday(d.noon())
}

// BusinessDaysBetween counts the business days strictly after from and
// strictly before to: the whole business days that have passed between a
// check created on from and a run on to, today not being over yet. It is
// zero when to is not after from.
func (c *Calendar) BusinessDaysBetween(from, to Date) int {
	n := 0
	for d := from.AddDays(1); d.Before(to); d = d.AddDays(1) {
		if c.IsBusinessDay(d) {
			n++
		}
	}
	return n
}
