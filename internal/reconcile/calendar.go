package reconcile

import "github.com/batchd/batchd/internal/calendar"

// Calendar counts business days on reconcile's Dates. It is the shared
// calendar of internal/calendar (Federal Reserve holidays), the one the
// emulator moves checks on by, seen through reconcile's Date type.
// It is safe for concurrent use.
type Calendar struct {
	c *calendar.Calendar
}

// FederalReserveCalendar returns the calendar of the Federal Reserve Bank
// holidays (see calendar.FederalReserve).
func FederalReserveCalendar() *Calendar {
	return &Calendar{c: calendar.FederalReserve()}
}

// IsBusinessDay reports whether d is a weekday that is not an observed
// holiday.
func (c *Calendar) IsBusinessDay(d Date) bool {
	return c.c.IsBusinessDay(d.noon())
}

// BusinessDaysBetween counts the business days strictly after from and
// strictly before to: the whole business days that have passed between a
// check created on from and a run on to, today not being over yet. It is
// zero when to is not after from.
func (c *Calendar) BusinessDaysBetween(from, to Date) int {
	return c.c.BusinessDaysBetween(from.noon(), to.noon())
}
