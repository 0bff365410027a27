// Package clocktest is the one test clock every package's tests use: a
// settable, goroutine-safe time source to hand to an Options.Now (or any
// func() time.Time) in place of time.Now, so that no test's outcome
// depends on the day, the weekday or the hour it runs at.
//
// Tests pin a date that means something (a Monday, the day before a bank
// holiday, a DST change) with New or one of the named dates below, and
// move time with Advance or Set; nothing here reads the wall clock.
package clocktest

import (
	"sync"
	"time"
)

// Clock is a settable clock. The zero Clock is not useful: use New.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock standing at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time. Its method value (c.Now) is what
// Options.Now fields take.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock d forward (backward for a negative d) and
// returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Pinned dates whose calendar answers are known, for tests that move time
// or count business days. Each is at 10:00 UTC unless its name says
// otherwise.
var (
	// Monday is Monday 2 March 2026: a plain week, no holiday near.
	Monday = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	// Friday is Friday 6 March 2026: the weekend comes next.
	Friday = time.Date(2026, 3, 6, 10, 0, 0, 0, time.UTC)
	// BeforeThanksgiving is Wednesday 25 November 2026: Thursday is a
	// Federal Reserve holiday.
	BeforeThanksgiving = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	// ChristmasEve is Thursday 24 December 2026: Friday is a holiday.
	ChristmasEve = time.Date(2026, 12, 24, 10, 0, 0, 0, time.UTC)
	// NewYearsEve is Thursday 31 December 2026 at 23:59 UTC: a month, a
	// year and (in UTC) a day end within the minute, and 1 January is a
	// holiday.
	NewYearsEve = time.Date(2026, 12, 31, 23, 59, 0, 0, time.UTC)
	// DSTChange is Sunday 8 March 2026, 10:00 UTC: the day US clocks
	// spring forward (02:00 local), so America/New_York's day is 23 hours.
	DSTChange = time.Date(2026, 3, 8, 10, 0, 0, 0, time.UTC)
)

// Dates lists the pinned dates that date-moving integration tests run on,
// by name, for t.Run.
func Dates() []NamedDate {
	return []NamedDate{
		{"monday", Monday},
		{"friday", Friday},
		{"before-thanksgiving", BeforeThanksgiving},
		{"christmas-eve", ChristmasEve},
		{"new-years-eve", NewYearsEve},
		{"dst-change", DSTChange},
	}
}

// NamedDate is a pinned date with a name for subtests.
type NamedDate struct {
	Name string
	At   time.Time
}
