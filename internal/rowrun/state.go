package rowrun

import (
	"context"
	"sync"

	"github.com/batchd/batchd/internal/payment"
)

// State is what one run remembers of itself whatever its kind: why it must
// stop, the last failure that left work undone, the rows it gave up on and
// how often it sent each. Rows are sent by concurrent workers, so every
// field is read and written under mu. The zero State is a run about to
// start. A kind's own counters (its summary) stay with the kind.
type State struct {
	mu      sync.Mutex
	halted  error                   // why the run must stop: key refused, ledger failed
	lastErr error                   // the last failure that left work undone
	skip    map[payment.RowKey]bool // given up on for this run
	tries   map[payment.RowKey]int  // sends per row in this run
}

// Halt records why the run must stop; the first cause wins.
func (s *State) Halt(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.halted == nil {
		s.halted = err
	}
}

// HaltedBy is why the run must stop, or nil.
func (s *State) HaltedBy() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.halted
}

// Stopping reports whether no new request may start: ctx ended or the run
// halted.
func (s *State) Stopping(ctx context.Context) bool {
	return ctx.Err() != nil || s.HaltedBy() != nil
}

// Undone notes err as the latest failure that left work undone, so that
// the run's error names it.
func (s *State) Undone(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr = err
}

// LastUndone is the latest failure that left work undone, or nil.
func (s *State) LastUndone() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// Skip gives up on k for the rest of the run.
func (s *State) Skip(k payment.RowKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.skip == nil {
		s.skip = map[payment.RowKey]bool{}
	}
	s.skip[k] = true
}

// Skipped reports whether the run gave up on k.
func (s *State) Skipped(k payment.RowKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skip[k]
}

// Try counts one more send of k in this run, across resends after
// lookups, and returns how many there were, so that no row loops forever.
func (s *State) Try(k payment.RowKey) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tries == nil {
		s.tries = map[payment.RowKey]int{}
	}
	s.tries[k]++
	return s.tries[k]
}
