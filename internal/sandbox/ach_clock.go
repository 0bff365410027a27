package sandbox

import (
	"time"
)

// maxClockOffsetDays bounds how far a key's sandbox day may be set from
// the real one, to keep every date in range.
const maxClockOffsetDays = 36500

// daysBetween is the number of calendar days from the UTC day of from to
// the UTC day of to, computed on Unix seconds so that no distant date can
// overflow a Duration.
func daysBetween(from, to time.Time) int64 {
	return (dateOf(to).Unix() - dateOf(from).Unix()) / 86400
}

// startOffset is the day offset a new key's clock starts with: the
// distance from today to Options.Date, or Options.StartDays without a
// start date.
// Computed per key, every key starts on that day whenever it first
// appears.
func (s *Server) startOffset() int64 {
	if s.opts.Date.IsZero() {
		return min(max(int64(s.opts.StartDays), -maxClockOffsetDays), maxClockOffsetDays)
	}
	n := daysBetween(s.realDay(), s.opts.Date)
	return min(max(n, -maxClockOffsetDays), maxClockOffsetDays)
}

// setDay moves the key's sandbox clock to day, forward or back, keeping
// the real time of day. It answers 400 naming date when day is more than
// maxClockOffsetDays from today.
func (s *Server) setDay(ks *keyState, day time.Time) *apiError {
	n := daysBetween(s.realDay(), day)
	if n < -maxClockOffsetDays || n > maxClockOffsetDays {
		return badField("date", "must be within %d days of today", maxClockOffsetDays)
	}
	ks.offsetDays.Store(n)
	return nil
}
