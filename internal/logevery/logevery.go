// Package logevery keeps a flood of one kind of event from flooding the
// log: one line per kind and interval, carrying the count of events since
// the previous line. The metrics count every event; the log says that
// they happen, and how often.
package logevery

import (
	"sync"
	"time"
)

// Gate decides which events of each kind get a log line: the first of a
// kind, then the first one Every or more after that kind's previous line.
// Kinds must come from a small fixed set (outcomes, reasons), never from
// a request. The time is passed in, so that callers use their injected
// clock. The zero Gate (Every 0) lets every event through. Safe for
// concurrent use.
type Gate struct {
	Every time.Duration

	mu    sync.Mutex
	last  map[string]time.Time // kind -> time of its last line
	since map[string]int       // kind -> events since its last line
}

// Note counts one event of kind at now. It returns whether a line is due
// and, if so, how many events that line stands for (this one and those
// since the previous line), resetting the count.
func (g *Gate) Note(kind string, now time.Time) (n int, due bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last == nil {
		g.last, g.since = make(map[string]time.Time), make(map[string]int)
	}
	g.since[kind]++
	last, seen := g.last[kind]
	if seen && now.Sub(last) < g.Every {
		return 0, false
	}
	n = g.since[kind]
	g.last[kind], g.since[kind] = now, 0
	return n, true
}
