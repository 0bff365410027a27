package daemon

import (
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// A shared ledger's database that went back in time (state's rewind.go)
// refuses the first write made on it. The run that made it fails; every
// other job stops at once, as when the lease is lost, since nothing a run
// decided on the ledger before may go on; and at the next renewal of the
// lease (this instance still holds it) the takeover applies the restore
// rules before any job runs again: every row without a check in doubt,
// looked up before any send. The log says so twice (when it is seen, and
// when the rules were applied, with the counts), /healthz fails from
// the first until the second and then keeps the last rewind in its
// "rewind" section, and batchd_ledger_rewinds_total counts it for the
// critical alert BatchdLedgerWentBackInTime.

// sourceRewind files a run whose write the ledger refused because its
// database went back in time, in /healthz and
// batchd_job_failures_total{source}.
const sourceRewind = "rewind"

// rewindNote is what this instance knows of the last rewind. Guarded by
// Scheduler.mu.
type rewindNote struct {
	seen    time.Time // when a job's write found it; zero when none did
	job     string    // that job
	err     string    // its error
	applied *state.Rewind
	at      time.Time // when the restore rules were applied
}

// RewindHealth is /healthz's account of the last rewind of the ledger's
// database that this instance applied the restore rules for.
type RewindHealth struct {
	At             time.Time `json:"at"`
	Cause          string    `json:"cause"`
	RowsPutInDoubt int       `json:"rows_put_in_doubt"`
	WritesLost     uint64    `json:"writes_lost,omitempty"`
}

// rewindSeen ends the term at once: a write of job found the ledger's
// database gone back in time.
func (s *Scheduler) rewindSeen(job string, err error) {
	s.mu.Lock()
	s.rewind.seen, s.rewind.job, s.rewind.err = s.now(), job, err.Error()
	if !s.role.leading {
		s.mu.Unlock()
		return
	}
	s.role.leading = false
	s.role.endTerm(fmt.Errorf("%w: the ledger's database went back in time", ErrLostLeadership))
	s.role.term, s.role.endTerm = nil, nil
	running := s.runningLocked()
	s.mu.Unlock()
	s.log.Error("a write found the ledger's database gone back in time: every job stops, and the restore rules are applied before any runs again",
		"job", job, "error", err.Error(), "cancelled", running)
	s.updateStatus()
}

// rewound notes that TakeOver applied the restore rules for rw.
func (s *Scheduler) rewound(rw *state.Rewind) {
	s.mu.Lock()
	s.rewind.applied, s.rewind.at, s.rewind.seen = rw, s.now(), time.Time{}
	s.mu.Unlock()
	s.log.Error(state.LogMessage, rw.LogAttrs()...)
	s.opts.Metrics.LedgerRewound()
}

// rewindHealthLocked is /healthz's failure while a rewind that a write
// found waits for the restore rules, and its account of the last one
// applied. s.mu held.
func (s *Scheduler) rewindHealthLocked() (*Failure, *RewindHealth) {
	var f *Failure
	if r := s.rewind; !r.seen.IsZero() {
		f = &Failure{Check: "rewind", Job: r.job, Source: string(payment.SourceLedger), Since: r.seen, At: r.seen,
			Error: "the ledger's database went back in time; every job stopped until the restore rules are applied: " + r.err}
	}
	var h *RewindHealth
	if rw := s.rewind.applied; rw != nil {
		h = &RewindHealth{At: s.rewind.at, Cause: "the ledger's database went back in time: " + rw.Cause,
			RowsPutInDoubt: rw.InDoubt, WritesLost: rw.Lost}
	}
	return f, h
}
