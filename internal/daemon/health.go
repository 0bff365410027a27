package daemon

import (
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
	// succeeds, and makes /healthz unhealthy.
	Failures []Failure `json:"failures,omitempty"`
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
	Check string `json:"check,omitempty"` // the failed check: "ledger"
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
	s.mu.Lock()
	defer s.mu.Unlock()
	h := Health{Alive: s.state == started, Jobs: make([]JobHealth, 0, len(s.order))}
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
		if lr := st.last; lr != nil {
			jh.LastCause, jh.LastStart, jh.LastEnd = lr.cause, lr.start, lr.end
			jh.LastOutcome, jh.LastSummary, jh.LastError = lr.outcome, lr.summary, lr.err
			jh.LastErrorSource = string(lr.source)
		}
		if f := st.failing; f != nil {
			c := *f
			jh.Failing = &c
			h.Failures = append(h.Failures, c)
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
