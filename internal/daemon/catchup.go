package daemon

import (
	"time"

	"github.com/robfig/cron/v3"
)

// lookbacks are the windows searched, smallest first, for a schedule's
// latest activation. Each window is searched forward with Next, so the
// work is bounded by the activations in the first window that holds one:
// an every-minute schedule is found in the first window, a yearly one in
// the sixth, after a handful of steps.
var lookbacks = [...]time.Duration{
	time.Minute, time.Hour, 25 * time.Hour, 8 * 24 * time.Hour,
	32 * 24 * time.Hour, 367 * 24 * time.Hour, 5 * 367 * 24 * time.Hour,
}

// maxSteps bounds the forward search in one window (a minute schedule
// restricted to one day a month yields 1440 in its window).
const maxSteps = 100_000

// prevActivation returns the latest time at or before now at which sched
// fires, or the zero time when it never fired in the last five years.
// robfig's schedules only have Next, so the search steps forward from
// now-lookback. For "@every d" there is no fixed grid; the previous
// activation is taken as now-d, so a job is caught up once its last
// success is more than one interval old.
func prevActivation(sched cron.Schedule, now time.Time) time.Time {
	if every, ok := sched.(cron.ConstantDelaySchedule); ok {
		return now.Add(-every.Delay)
	}
	for _, lb := range lookbacks {
		t := now.Add(-lb)
		var prev time.Time
		for range maxSteps {
			n := sched.Next(t)
			if n.IsZero() || n.After(now) {
				break
			}
			prev, t = n, n
		}
		if !prev.IsZero() {
			return prev
		}
	}
	return time.Time{}
}

// catchUp runs once, at Start, every job whose last success predates its
// latest scheduled activation. A job with no recorded success is not run:
// on a fresh install nothing was missed, and the schedule takes over.
func (s *Scheduler) catchUp() {
	if s.opts.LastSuccess == nil {
		return
	}
	now := s.now()
	s.mu.Lock()
	type cand struct {
		name  string
		sched cron.Schedule
	}
	var cands []cand
	for _, name := range s.order {
		cands = append(cands, cand{name, s.jobs[name].sched})
	}
	s.mu.Unlock()
	for _, c := range cands {
		last, ok := s.opts.LastSuccess(c.name)
		if !ok {
			s.log.Info("no catch-up: no successful run recorded yet", "job", c.name)
			continue
		}
		last = last.In(s.opts.Location)
		s.noteLastSuccess(c.name, last)
		prev := prevActivation(c.sched, now)
		if prev.IsZero() || !last.Before(prev) {
			s.log.Debug("no catch-up: last success is after the latest scheduled run",
				"job", c.name, "last_success", last, "scheduled", prev)
			continue
		}
		s.log.Info("catching up a missed run", "job", c.name,
			"reason", "missed run at "+prev.Format("2006-01-02 15:04 MST")+
				" while batchd was down or failing; last success "+last.Format("2006-01-02 15:04 MST"))
		if err := s.launch(c.name, CauseCatchUp); err != nil {
			s.log.Warn("catch-up run not started", "job", c.name, "error", err.Error())
		}
	}
}

// noteLastSuccess seeds the job's last success from the ledger, so that
// /healthz and the metrics show it before the first run of this process.
func (s *Scheduler) noteLastSuccess(name string, at time.Time) {
	s.opts.Metrics.SetJobLastSuccess(name, at)
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.jobs[name]; st != nil && st.lastSuccess.Before(at) {
		st.lastSuccess = at
	}
}
