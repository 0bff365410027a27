package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/batchd/batchd/internal/metrics"
)

// Options configures a Scheduler. Every field is optional.
type Options struct {
	// Location is the time zone of every schedule. Nil means UTC (the
	// configuration's default), never the host's zone, so that a schedule
	// means the same thing on every machine.
	Location *time.Location
	// Logger receives one line per finished run, skips, catch-up decisions
	// and reloads. Nil discards.
	Logger *slog.Logger
	// Metrics records runs, durations, skips and panics. Nil records nothing.
	Metrics *metrics.Metrics
	// LastSuccess returns the start time of the job's last successful run
	// as persisted (batchd keeps it in the ledger), and false when none is
	// known. Start uses it to catch up runs missed while batchd was down.
	// Nil disables catch-up.
	LastSuccess func(job string) (time.Time, bool)
	// RecordSuccess persists the start time of a successful run, for
	// LastSuccess after the next start. An error is logged; it does not
	// change the run's outcome.
	RecordSuccess func(job string, at time.Time) error
	// Status returns the document served at GET /v1/status, the same as
	// `batchd status --json`. Nil makes that endpoint answer 404.
	Status func(ctx context.Context) (any, error)
	// StatusNote returns a short note appended to the systemd STATUS= line,
	// such as "3 rows in doubt"; "" adds nothing. It is called after every
	// run, so it must be cheap.
	StatusNote func() string
	// Notifier receives sd_notify messages. Nil sends none.
	Notifier Notifier
	// Now returns the current time; nil means time.Now. It dates runs and
	// decides catch-up. Cron itself always follows the real clock.
	Now func() time.Time
}

// lifecycle is where a Scheduler is in New -> Start -> Stop.
type lifecycle int

const (
	created lifecycle = iota
	started
	stopping
)

// Scheduler runs named jobs on cron schedules. Runs of one job never
// overlap, whatever started them: the schedule, Trigger, catch-up or a
// chain. A panic in a job is recovered and ends only that run.
type Scheduler struct {
	opts   Options
	log    *slog.Logger
	parser cron.Parser
	cron   *cron.Cron

	mu      sync.Mutex
	state   lifecycle
	jobs    map[string]*jobState
	order   []string            // job names in definition order, for stable output
	chains  map[string][]string // after -> jobs to request when it succeeds
	runCtx  context.Context
	cancel  context.CancelCauseFunc
	lastErr *RunError
	wg      sync.WaitGroup // one per run in progress

	notifyMu sync.Mutex // keeps STATUS= lines in the order they were computed
}

// jobState is the scheduler's record of one job. Guarded by Scheduler.mu.
type jobState struct {
	job         Job
	sched       cron.Schedule
	entry       cron.EntryID // 0 until scheduled
	running     bool
	since       time.Time // start of the run in progress
	pending     bool      // a chained request arrived while running
	last        *lastRun
	lastSuccess time.Time
}

// lastRun describes a finished run.
type lastRun struct {
	cause      Cause
	start, end time.Time
	outcome    Outcome
	summary    string
	err        string
}

// New validates every job (name, Run, schedule) and returns a Scheduler
// that runs nothing until Start. All problems are reported in one error.
func New(jobs []Job, opts Options) (*Scheduler, error) {
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Notifier == nil {
		opts.Notifier = nopNotifier{}
	}
	s := &Scheduler{opts: opts, log: opts.Logger, parser: newParser(), chains: map[string][]string{}}
	cs, err := compile(s.parser, jobs)
	if err != nil {
		return nil, fmt.Errorf("configure jobs: %w", err)
	}
	s.jobs = make(map[string]*jobState, len(cs))
	for _, c := range cs {
		s.jobs[c.job.Name] = &jobState{job: c.job, sched: c.sched}
		s.order = append(s.order, c.job.Name)
	}
	s.cron = cron.New(cron.WithLocation(opts.Location), cron.WithParser(s.parser),
		cron.WithLogger(cronLogger{s.log}))
	return s, nil
}

func (s *Scheduler) now() time.Time { return s.opts.Now().In(s.opts.Location) }

// Start starts the schedules and then catches up missed runs: a job whose
// last success (Options.LastSuccess) is older than its latest scheduled
// time runs once at once. Every run's ctx derives from ctx, so cancelling
// ctx cancels runs at once; pass a context that outlives the shutdown
// signal and call Stop for a graceful stop. Start may be called once.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.state != created {
		s.mu.Unlock()
		return errors.New("start scheduler: already started")
	}
	s.runCtx, s.cancel = context.WithCancelCause(ctx)
	s.state = started
	for _, name := range s.order {
		st := s.jobs[name]
		st.entry = s.cron.Schedule(st.sched, s.tick(name))
	}
	s.mu.Unlock()
	s.cron.Start()
	s.catchUp()
	return nil
}

// tick is the cron entry of one job. It looks the job up by name at each
// firing, so that Reload can replace Run without rescheduling.
func (s *Scheduler) tick(name string) cron.Job {
	return cron.FuncJob(func() {
		err := s.launch(name, CauseSchedule)
		if errors.Is(err, ErrRunning) {
			s.log.Warn("skipped scheduled run: the previous run is still running", "job", name)
			s.opts.Metrics.JobSkipped(name)
		}
	})
}

// Trigger starts a run of the job now, in the background. It returns
// ErrRunning when the job is running, ErrUnknownJob for an unknown name and
// ErrNotRunning before Start or once Stop has begun.
func (s *Scheduler) Trigger(name string) error {
	return s.launch(name, CauseManual)
}

// Reload replaces the jobs, typically on SIGHUP after re-reading the
// configuration. Every job is validated first; on any error nothing
// changes and the old schedules stay. A running job is not disturbed: it
// finishes with the Run it started with, and the next run uses the new one.
// A job whose Spec is unchanged keeps its place in time (an "@every 5m"
// timer is not reset). The Location cannot change; that needs a restart.
func (s *Scheduler) Reload(jobs []Job) error {
	cs, err := compile(s.parser, jobs)
	if err != nil {
		return fmt.Errorf("reload jobs (old schedules kept): %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stopping {
		return fmt.Errorf("reload jobs: %w", ErrNotRunning)
	}
	old := s.jobs
	s.jobs = make(map[string]*jobState, len(cs))
	s.order = s.order[:0]
	for _, c := range cs {
		name := c.job.Name
		st := old[name]
		if st == nil {
			st = &jobState{}
		}
		delete(old, name)
		respec := st.entry == 0 || st.job.Spec != c.job.Spec
		st.job, st.sched = c.job, c.sched
		if s.state == started && respec {
			if st.entry != 0 {
				s.cron.Remove(st.entry)
			}
			st.entry = s.cron.Schedule(c.sched, s.tick(name))
		}
		s.jobs[name] = st
		s.order = append(s.order, name)
		s.log.Info("job schedule loaded", "job", name, "schedule", c.job.Spec, "changed", respec)
	}
	for name, st := range old {
		if st.entry != 0 {
			s.cron.Remove(st.entry)
		}
		s.log.Info("job removed", "job", name, "running", st.running)
	}
	return nil
}

// Stop stops taking work and waits for the runs in progress. It sends
// STOPPING=1, stops the schedules, refuses new runs, and cancels the ctx
// of every running job (cause ErrStopping), which should then finish what
// it has in flight and return. Stop waits until every run has returned or
// ctx is done (give it the shutdown timeout); in the latter case it
// returns an error naming the jobs still running. Stop may be called more
// than once; each call waits.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	first := s.state != stopping
	wasStarted := s.state == started
	s.state = stopping
	s.mu.Unlock()
	if first {
		s.opts.Notifier.Stopping()
		if wasStarted {
			s.cron.Stop()
			s.cancel(ErrStopping)
		}
		s.log.Info("scheduler stopping", "running", s.runningNames())
		s.updateStatus()
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop scheduler: still running %v: %w", s.runningNames(), context.Cause(ctx))
	}
}

// runningNames lists the jobs with a run in progress, sorted.
func (s *Scheduler) runningNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for name, st := range s.jobs {
		if st.running {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
