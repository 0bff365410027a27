package onboard

import (
	"sync"

	"github.com/batchd/batchd/internal/payment"
)

// runState is what one Run remembers of itself. Rows of different
// customers are sent by concurrent workers, so every field is read and
// written under mu, through the methods below.
type runState struct {
	mu        sync.Mutex
	sum       Summary
	halted    error                   // why the run must stop: key refused, ledger failed
	lastErr   error                   // the last failure that left work undone
	skip      map[payment.RowKey]bool // given up on for this run
	tries     map[payment.RowKey]int  // sends per row in this run
	initTried map[payment.RowKey]bool // micro-deposit initiations tried in this run
	customers map[string]string       // funding.EmailKey -> user_id
}

// newRunState is the state of a run about to start.
func newRunState() *runState {
	return &runState{skip: map[payment.RowKey]bool{}, tries: map[payment.RowKey]int{},
		initTried: map[payment.RowKey]bool{}, customers: map[string]string{}}
}

// count changes the summary under the lock.
func (s *runState) count(f func(*Summary)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.sum)
}

// summary is a copy of the summary so far.
func (s *runState) summary() Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sum
}

// halt records why the run must stop; the first cause wins.
func (s *runState) halt(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.halted == nil {
		s.halted = err
	}
}

// haltedBy is why the run must stop, or nil.
func (s *runState) haltedBy() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.halted
}

// setLastErr notes the latest failure that left work undone.
func (s *runState) setLastErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr = err
}

// last is the latest failure that left work undone, or nil.
func (s *runState) last() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// setSkip gives up on k for the rest of the run.
func (s *runState) setSkip(k payment.RowKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.skip[k] = true
}

// skipped reports whether the run gave up on k.
func (s *runState) skipped(k payment.RowKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skip[k]
}

// try counts one more send of k and returns how many there were.
func (s *runState) try(k payment.RowKey) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tries[k]++
	return s.tries[k]
}

// tryInit marks k's micro-deposit initiation tried in this run.
func (s *runState) tryInit(k payment.RowKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initTried[k] = true
}

// initWasTried reports whether k's initiation was tried in this run: an
// initiation whose answer was lost is not sent again in the same run.
func (s *runState) initWasTried(k payment.RowKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initTried[k]
}

// customer is the user_id known for an email key, if any.
func (s *runState) customer(email string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.customers[email]
	return id, ok && id != ""
}

// setCustomer records that email's customer is userID.
func (s *runState) setCustomer(email, userID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if email != "" {
		s.customers[email] = userID
	}
}
