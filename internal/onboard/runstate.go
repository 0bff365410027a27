package onboard

import (
	"sync"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/rowrun"
)

// runState is one Run: the row engine's run (rowrun.Engine: halt, last
// failure, rows given up on, tries) and what onboarding adds. Rows of different customers are sent by concurrent
// workers, so every field here is read and written under mu, through the
// methods below.
type runState struct {
	*rowrun.Engine

	mu        sync.Mutex
	sum       Summary
	initTried sync.Map // payment.RowKey -> true: micro-deposit initiations tried in this run
	customers sync.Map // funding.EmailKey -> user_id
}

// newRunState is the state of a run about to start on e.
func newRunState(e *rowrun.Engine) *runState {
	return &runState{Engine: e}
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

// tryInit marks k's micro-deposit initiation tried in this run.
func (s *runState) tryInit(k payment.RowKey) { s.initTried.Store(k, true) }

// initWasTried reports whether k's initiation was tried in this run: an
// initiation whose answer was lost is not sent again in the same run.
func (s *runState) initWasTried(k payment.RowKey) bool {
	_, ok := s.initTried.Load(k)
	return ok
}

// customer is the user_id known for an email key, if any.
func (s *runState) customer(email string) (string, bool) {
	id, _ := s.customers.Load(email)
	str, _ := id.(string)
	return str, str != ""
}

// setCustomer records that email's customer is userID.
func (s *runState) setCustomer(email, userID string) {
	if email != "" {
		s.customers.Store(email, userID)
	}
}
