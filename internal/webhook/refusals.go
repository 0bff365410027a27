package webhook

import (
	"sync"
	"time"
)

// RefusalLogEvery is the least time between two log lines about refused
// requests of one outcome. A flood of forged or misrouted requests (2,000
// wrong secrets in a second) must not flood the journal: each refusal is
// counted in the metrics, and the log says, once a minute, how many there
// were.
const RefusalLogEvery = time.Minute

// refusalLog decides which refused requests get a log line: the first of
// an outcome, then the first one RefusalLogEvery or more after that
// outcome's previous line. Outcomes are a fixed set, so the maps stay
// small. Its zero value is ready.
type refusalLog struct {
	mu    sync.Mutex
	last  map[string]time.Time // outcome -> time of its last line
	since map[string]int       // outcome -> refusals since its last line
}

// note counts one refusal of outcome at now. It returns whether a line is
// due and, if so, how many refusals that line stands for (this one and
// those since the previous line), resetting the count.
func (l *refusalLog) note(outcome string, now time.Time) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last, l.since = make(map[string]time.Time), make(map[string]int)
	}
	l.since[outcome]++
	last, seen := l.last[outcome]
	if seen && now.Sub(last) < RefusalLogEvery {
		return 0, false
	}
	n := l.since[outcome]
	l.last[outcome], l.since[outcome] = now, 0
	return n, true
}
