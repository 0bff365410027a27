// Package logattr holds the log attributes that need care to read the same
// in every handler.
package logattr

import (
	"log/slog"
	"time"
)

// Duration is d as a log attribute, a Go duration string ("13h45m52s",
// "1.5s", "250µs"): slog's JSON handler, the daemon's under journald,
// writes a time.Duration as integer nanoseconds ("eta":49552000000000),
// which nobody reads as 13 hours 45 minutes. At a second or more it is
// rounded to the millisecond: the digits below say nothing there.
func Duration(key string, d time.Duration) slog.Attr {
	if d >= time.Second || d <= -time.Second {
		d = d.Round(time.Millisecond)
	}
	return slog.String(key, d.String())
}
