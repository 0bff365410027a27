package reconcile

import (
	"fmt"
	"time"
)

// Date is a calendar day without a time or a zone, the unit of the check
// list's from_date and to_date and of every date in the reports.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf returns the day t falls on in t's own location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{y, m, d}
}

// ParseDate reads a YYYY-MM-DD date.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("parse date %q: want YYYY-MM-DD", s)
	}
	return DateOf(t), nil
}

// String formats d as YYYY-MM-DD, the form of the API and the reports.
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day) }

// IsZero reports whether d is the zero Date.
func (d Date) IsZero() bool { return d == Date{} }

// AddDays returns d moved n days (n may be negative).
func (d Date) AddDays(n int) Date { return DateOf(d.noon().AddDate(0, 0, n)) }

// Compare returns -1, 0 or +1 as d is before, equal to or after e.
func (d Date) Compare(e Date) int { return d.noon().Compare(e.noon()) }

// Before reports whether d is before e.
func (d Date) Before(e Date) bool { return d.Compare(e) < 0 }

// noon is d at noon UTC: a time that no zone arithmetic moves to another day.
func (d Date) noon() time.Time { return time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, time.UTC) }

// Window is the range of creation dates, both ends included, whose checks
// one run lists. Dates are the service's dates (see Run).
type Window struct {
	From, To Date
}

// ParseWindow reads a window given as two dates (the command line's
// --from and --to, the admin API's from and to): nil when both are
// empty, an error naming the one that is missing or does not parse.
func ParseWindow(from, to string) (*Window, error) {
	if from == "" && to == "" {
		return nil, nil
	}
	f, err := ParseDate(from)
	if err != nil {
		return nil, fmt.Errorf("from: %w (from and to go together)", err)
	}
	t, err := ParseDate(to)
	if err != nil {
		return nil, fmt.Errorf("to: %w (from and to go together)", err)
	}
	return &Window{From: f, To: t}, nil
}

// Contains reports whether d lies in the window.
func (w Window) Contains(d Date) bool { return !d.Before(w.From) && !w.To.Before(d) }

// String formats w as "2026-01-02..2026-01-31".
func (w Window) String() string { return w.From.String() + ".." + w.To.String() }
