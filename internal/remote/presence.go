package remote

import (
	"log/slog"
	"sync"
)

// Presence remembers, across the Clients of one process, whether the
// server was reached at the last attempt, so that "sftp connected" is
// logged at info only when that changes: the first connect, and the first
// after a failed one (a dial that failed, or a connection lost and
// redialled). The daemon dials afresh for every run, and an info line each
// time was 84 of 210 log lines; the others are at debug. The zero value
// is ready for use. A nil *Presence (a one-shot command, one Client)
// logs every connect at info.
type Presence struct {
	mu      sync.Mutex
	reached bool // the last attempt reached the server
}

// connected records a connect and returns the level to log it at.
func (p *Presence) connected() slog.Level {
	if p == nil {
		return slog.LevelInfo
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reached {
		return slog.LevelDebug
	}
	p.reached = true
	return slog.LevelInfo
}

// failed records a failed dial or a lost connection.
func (p *Presence) failed() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.reached = false
	p.mu.Unlock()
}
