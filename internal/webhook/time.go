package webhook

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// timeLayouts are the timestamp forms Decode reads: the service's
// "2026-02-19 15:59:10" (no zone: taken as UTC, which the service does not
// confirm), RFC 3339, and the zone-less ISO form.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05Z07:00",
}

// Bounds of an epoch-seconds timestamp: 2001-09-09 to 5138. A number out of
// them is more likely milliseconds or garbage than a time; Decode leaves At
// zero rather than guess.
const (
	minEpoch = 1e9
	maxEpoch = 1e11
)

// parseTime reads a delivery's timestamp; the zero time when s is empty or
// in no known form. Never an error: the time is informational, and its
// text still goes into the event's ID.
func parseTime(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || f < minEpoch || f >= maxEpoch {
			return time.Time{}
		}
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC()
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
