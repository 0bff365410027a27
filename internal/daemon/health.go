package daemon

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/batchd/batchd/internal/payment"
)

// Health is a snapshot of the scheduler for /healthz and the status line.
type Health struct {
	// Alive is true between Start and Stop while the cron loop answers.
	Alive bool `json:"alive"`
	// Jobs lists every job in definition order.
	Jobs []JobHealth `json:"jobs"`
	// LastError is the most recent failed run of any job, if any.
	LastError *RunError `json:"last_error,omitempty"`
	// Failures lists the jobs whose last finished run failed (or
	// panicked), in definition order: each stays until the job next
	// succeeds, and makes /healthz unhealthy. A standby's job failures
	// are history (it runs no job): they stay under Jobs, not here. With
	// leader election, a failure "leader" says no instance has led for
	// twice the lease TTL.
	Failures []Failure `json:"failures,omitempty"`
	// Role is this instance's part in the leader election; nil without
	// one (Options.Leadership).
	Role *Role `json:"role,omitempty"`
	// Rewind is the last time this instance found the shared ledger's
	// database gone back in time and applied the restore rules (rewind.go);
	// nil when it never did.
	Rewind *RewindHealth `json:"rewind,omitempty"`
}

// JobHealth describes one job. Times are in the scheduler's Location;
// zero times are omitted from JSON.
type JobHealth struct {
	Name     string    `json:"name"`
	Schedule string    `json:"schedule"`
	Running  bool      `json:"running"`
	Since    time.Time `json:"running_since,omitzero"` // start of the run in progress
	// Timeout is the job's run deadline (Job.Timeout), such as "15m0s".
	Timeout string `json:"timeout,omitempty"`
	// Deadline is when the run in progress is cancelled.
	Deadline time.Time `json:"deadline,omitzero"`
	// Skipped counts the scheduled ticks skipped during the run in
	// progress (it was still going).
	Skipped int `json:"skipped,omitempty"`
	// Stuck is set while the run in progress has not returned after its
	// deadline cancelled it (and Options.CancelGrace): Failing says more.
	Stuck bool `json:"stuck,omitempty"`
	// The last finished run of this process.
	LastCause   Cause     `json:"last_cause,omitempty"`
	LastStart   time.Time `json:"last_start,omitzero"`
	LastEnd     time.Time `json:"last_end,omitzero"`
	LastOutcome Outcome   `json:"last_outcome,omitempty"`
	LastSummary string    `json:"last_summary,omitempty"`
	LastError   string    `json:"last_error,omitempty"`
	// LastErrorSource files LastError under where it came from: "sftp",
	// "api", "ledger" or "batchd" (payment.SourceOf).
	LastErrorSource string `json:"last_error_source,omitempty"`
	// Failing is set while the job is failing: from a failed run until
	// its next success.
	Failing *Failure `json:"failing,omitempty"`
	// Runs counts the runs started since batchd started; LastRun is the
	// number of the last one finished, which the Last fields describe
	// (see Scheduler.TriggerWith).
	Runs    uint64 `json:"runs,omitempty"`
	LastRun uint64 `json:"last_run,omitempty"`
	// LastSuccess is the start of the last successful run, this process's
	// or the one recorded in the ledger.
	LastSuccess time.Time `json:"last_success,omitzero"`
	NextRun     time.Time `json:"next_run,omitzero"`
}

// RunError is a failed run.
type RunError struct {
	Job    string    `json:"job"`
	At     time.Time `json:"at"`
	Error  string    `json:"error"`
	Source string    `json:"source,omitempty"` // "sftp", "api", "ledger" or "batchd"
}

// Failure is one reason batchd is unhealthy: a failing job, or a failed
// check (the ledger's ping). Error is the error's message; batchd's errors
// carry no key and no full account number.
type Failure struct {
	Job   string `json:"job,omitempty"`   // the failing job, or
	Check string `json:"check,omitempty"` // the failed check: "ledger", "leader", "may-lead"
	// Source is where the error came from: "sftp" (the file server),
	// "api" (the payment service), "ledger" (batchd's state) or "batchd"
	// (anything else), as payment.SourceOf files it.
	Source string    `json:"source"`
	Error  string    `json:"error"`
	Since  time.Time `json:"since,omitzero"` // the first failed run since the last success
	At     time.Time `json:"at,omitzero"`    // the latest failed run
}

// sourceName is the name /healthz gives a source; an error of no known
// source is batchd's own.
func sourceName(src payment.Source) string {
	if src == "" {
		return string(payment.SourceOther)
	}
	return string(src)
}

// Health returns a snapshot. Its next-run times come from the cron loop
// itself, so Health blocks if that loop is wedged: that is deliberate, as
// it stops the watchdog pings and lets systemd restart batchd.
func (s *Scheduler) Health() Health {
	entries := s.cron.Entries()
	next := make(map[cron.EntryID]time.Time, len(entries))
	for _, e := range entries {
		next[e.ID] = e.Next
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	h := Health{Alive: s.state == started, Jobs: make([]JobHealth, 0, len(s.order)), Role: s.roleLocked(now)}
	if f := s.noLeaderFailure(h.Role, now); f != nil {
		h.Failures = append(h.Failures, *f)
	}
	if f := s.refusedFailureLocked(); f != nil {
		h.Failures = append(h.Failures, *f)
	}
	var rf *Failure
	if rf, h.Rewind = s.rewindHealthLocked(); rf != nil {
		h.Failures = append(h.Failures, *rf)
	}
	leading := s.leadingLocked()
	if s.lastErr != nil {
		e := *s.lastErr
		h.LastError = &e
	}
	loc := s.opts.Location
	for _, name := range s.order {
		st := s.jobs[name]
		jh := JobHealth{Name: name, Schedule: st.job.Spec, Running: st.running, LastSuccess: inLoc(st.lastSuccess, loc)}
		if st.job.Timeout > 0 {
			jh.Timeout = st.job.Timeout.String()
		}
		if st.running {
			jh.Since, jh.Deadline, jh.Skipped, jh.Stuck = st.since, st.deadline, st.skips, st.stuck
		}
		if s.state == started {
			jh.NextRun = inLoc(next[st.entry], loc)
		}
		jh.Runs = st.runs
		if lr := st.last; lr != nil {
			jh.LastRun = lr.n
			jh.LastCause, jh.LastStart, jh.LastEnd = lr.cause, lr.start, lr.end
			jh.LastOutcome, jh.LastSummary, jh.LastError = lr.outcome, lr.summary, lr.err
			jh.LastErrorSource = string(lr.source)
		}
		if f := st.failing; f != nil {
			c := *f
			jh.Failing = &c
			if leading {
				h.Failures = append(h.Failures, c)
			}
		}
		h.Jobs = append(h.Jobs, jh)
	}
	return h
}

// alive reports whether the scheduler is running and its loop answers.
func (s *Scheduler) alive() bool {
	return s.Health().Alive
}

func inLoc(t time.Time, loc *time.Location) time.Time {
	if t.IsZero() {
		return t
	}
	return t.In(loc)
}

// Role is this instance's part in the leader election, for /healthz.
type Role struct {
	// Text says it in one line: "leader (epoch N)", "standby; HOST:PID
	// leads (epoch N, lease until …)", or "no leader".
	Text    string `json:"text"`
	Leading bool   `json:"leading"`
	// Leader, Epoch and LeaseUntil are the lease as last read.
	Leader     string    `json:"leader,omitempty"`
	Epoch      uint64    `json:"epoch,omitempty"`
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	// Error is why the lease could not be read or taken, or why this
	// instance holds it without leading yet (its takeover failed).
	Error string `json:"error,omitempty"`
	// NoLeaderSince is set when no instance has been seen leading for
	// longer than twice the lease TTL: /healthz then fails.
	NoLeaderSince time.Time `json:"no_leader_since,omitzero"`
}

// roleLocked describes the election as of now; nil without one. s.mu
// held.
func (s *Scheduler) roleLocked(now time.Time) *Role {
	if !s.elected() {
		return nil
	}
	r, info := &Role{Leading: s.role.leading}, s.role.info
	r.Leader, r.Epoch, r.LeaseUntil = info.Holder, info.Epoch, info.Expires
	switch {
	case s.role.lastErr != nil:
		r.Error = "read or take the leader lease: " + s.role.lastErr.Error()
	case s.role.blocked != nil:
		r.Error = "the lease is held here, but the ledger could not be readied for this leader: " + s.role.blocked.Error()
	case s.role.refused != nil && !r.Leading:
		r.Error = "this instance does not take the lease: " + s.role.refused.Error()
	}
	switch {
	case r.Leading:
		r.Text = fmt.Sprintf("leader (epoch %d)", info.Epoch)
	case now.Sub(s.role.leaderSeen) > 2*s.opts.LeaseTTL:
		r.Text, r.NoLeaderSince = "no leader", s.role.leaderSeen
	case info.Holder != "" && !info.Self:
		r.Text = info.String()
	case info.Self:
		r.Text = fmt.Sprintf("taking over as leader (epoch %d)", info.Epoch)
	default:
		r.Text = "no leader"
	}
	return r
}

// noLeaderFailure is /healthz's failure when no instance has led for
// longer than twice the lease TTL: nothing runs the jobs.
func (s *Scheduler) noLeaderFailure(r *Role, now time.Time) *Failure {
	if r == nil || r.NoLeaderSince.IsZero() {
		return nil
	}
	cause := r.Error
	if cause == "" {
		cause = "no instance holds the ledger's lease"
	}
	return &Failure{Check: "leader", Source: string(payment.SourceLedger), Since: r.NoLeaderSince,
		Error: fmt.Sprintf("no leader for %s (lease_ttl %s), so no job runs: %s",
			now.Sub(r.NoLeaderSince).Round(time.Second), s.opts.LeaseTTL, cause)}
}
