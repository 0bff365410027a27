package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
	"golang.org/x/sync/errgroup"

	"github.com/batchd/batchd/internal/metrics"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// The values of batchd_job_skipped_total{reason}.
const (
	skipRunning = "running" // the job's previous run was still going
	skipStandby = "standby" // another instance leads
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
	// Metrics records runs, durations, skips, panics and failures by
	// source. Nil records nothing.
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
	// decides catch-up. Cron itself always follows the real clock, and so
	// do run deadlines (Job.Timeout), which are durations.
	Now func() time.Time
	// Leadership elects the instance that runs the scheduled jobs: the
	// ledger's lease (state.Leadership; leader.go says how it is kept).
	// While another instance leads, no job runs here. Nil: this instance
	// always leads, with no lease (tests, one-shot use).
	Leadership state.Leadership
	// TakeOver readies the ledger for this instance's term, each time it
	// becomes leader and before any job runs (state.Ledger's TakeOver),
	// and says what it did; also after a job's write found the ledger's
	// database gone back in time (rewind.go). Nil does nothing.
	TakeOver func() (state.TakeOverReport, error)
	// MayLead says, before each try to take or renew the lease, whether
	// this instance can do a leader's work (batchd: its key ring holds
	// the key the ledger seals with); leading says it leads now. An
	// error keeps an instance that does not lead from taking the lease
	// and fails /healthz with it (eligible.go). Nil always allows.
	MayLead func(leading bool) error
	// OnLead names jobs to run at once each time this instance becomes
	// leader, after the catch-up: work a standby could not do and that
	// must not wait for its schedule (the webhook URL's registration,
	// refused on a standby).
	OnLead []string
	// LeaseTTL is the lease's time to live (state.lease_ttl): it is
	// renewed every LeaseTTL/3. 0 means DefaultLeaseTTL.
	LeaseTTL time.Duration
	// CancelGrace is how long a run may take to return once its deadline
	// has cancelled its ctx, before the scheduler reports it stuck: logged,
	// counted as a timeout failure, and shown failing by /healthz while it
	// stays marked running. batchd gives it shutdown_timeout, the time a run
	// gets to wind down on SIGTERM too. 0 means 30s.
	CancelGrace time.Duration
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
	wg      sync.WaitGroup // one per run in progress, for Stop's bounded wait

	// group holds every goroutine that may touch the ledger: job runs, the
	// admin server (ServeAdmin) and the watchdog (StartWatchdog). Shutdown
	// waits for all of it before it closes the ledger. groupCtx is done
	// when a member fails (the admin server stops serving).
	group    *errgroup.Group
	groupCtx context.Context
	// auxCtx stops the admin server and the watchdog; Shutdown cancels it
	// once the runs have drained.
	auxCtx  context.Context
	stopAux context.CancelFunc
	// groupGrace bounds Shutdown's wait for the group once the runs were
	// cancelled and the admin server told to stop (tests shorten it).
	groupGrace time.Duration

	notifyMu sync.Mutex // keeps STATUS= lines in the order they were computed

	// role is this instance's part in the leader election (leader.go);
	// standbyLogged says the current standby term was logged.
	role          role
	standbyLogged bool
	// rewind is the last rewind of the ledger's database (rewind.go).
	rewind rewindNote
}

// jobState is the scheduler's record of one job. Guarded by Scheduler.mu.
type jobState struct {
	job         Job
	sched       cron.Schedule
	entry       cron.EntryID // 0 until scheduled
	running     bool
	since       time.Time // start of the run in progress
	pending     bool      // a chained request arrived while running
	deadline    time.Time // when the run in progress is cancelled; zero: none
	skips       int       // scheduled ticks skipped during the run in progress
	stuck       bool      // the run in progress passed its deadline and CancelGrace
	last        *lastRun
	lastSuccess time.Time
	failing     *Failure // the last failed run, until the job next succeeds
	runs        uint64   // runs started since the scheduler was made
}

// lastRun describes a finished run.
type lastRun struct {
	n          uint64 // the run's number (jobState.runs when it started)
	cause      Cause
	start, end time.Time
	outcome    Outcome
	summary    string
	err        string
	source     payment.Source // where err came from, when there is one
	skips      int            // scheduled ticks skipped while it ran
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
	if opts.CancelGrace <= 0 {
		opts.CancelGrace = defaultCancelGrace
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	s := &Scheduler{opts: opts, log: opts.Logger, parser: newParser(), chains: map[string][]string{},
		groupGrace: shutdownGrace + 5*time.Second}
	s.group, s.groupCtx = errgroup.WithContext(context.Background())
	s.auxCtx, s.stopAux = context.WithCancel(context.Background())
	cs, err := compile(s.parser, jobs)
	if err != nil {
		return nil, fmt.Errorf("configure jobs: %w", err)
	}
	s.jobs = make(map[string]*jobState, len(cs))
	for _, c := range cs {
		s.jobs[c.job.Name] = &jobState{job: c.job, sched: c.sched}
		s.order = append(s.order, c.job.Name)
		s.initMetrics(c.job.Name)
	}
	s.cron = cron.New(cron.WithLocation(opts.Location), cron.WithParser(s.parser),
		cron.WithLogger(cronLogger{s.log}))
	return s, nil
}

// defaultCancelGrace is Options.CancelGrace when unset.
const defaultCancelGrace = 30 * time.Second

// sourceTimeout files a run cancelled at its deadline (Job.Timeout), in
// /healthz and batchd_job_failures_total{source}.
const sourceTimeout payment.Source = "timeout"

// failureSources are the values of batchd_job_failures_total{source}, as
// sourceName gives them.
var failureSources = []string{string(payment.SourceSFTP), string(payment.SourceAPI),
	string(payment.SourceLedger), string(payment.SourceOther), string(sourceTimeout), sourceFenced, sourceRewind}

// outcomes are the values of batchd_job_runs_total{outcome}.
var outcomes = []string{string(OutcomeOK), string(OutcomeFailed), string(OutcomeCanceled), string(OutcomePanic)}

// initMetrics makes the job's series exist before its first run: its last
// success at 0, so that a "never succeeded" alert can fire on a fresh
// daemon, and its counters at 0, so that an alert on their increase sees
// the first failure, timeout or skip.
func (s *Scheduler) initMetrics(name string) {
	s.opts.Metrics.InitJob(name, outcomes, failureSources)
}

func (s *Scheduler) now() time.Time { return s.opts.Now().In(s.opts.Location) }

// Start starts the schedules and then catches up missed runs: a job whose
// last success (Options.LastSuccess) is older than its latest scheduled
// time runs once at once. With Options.Leadership, Start first asks for
// the lease: the catch-up and every run wait until this instance leads. Every run's ctx derives from ctx, so cancelling
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
	s.role.leaderSeen = s.now()
	if !s.elected() {
		s.role.term = s.runCtx // one term, from Start to Stop
	}
	s.opts.Metrics.SetStartTime(s.now())
	for _, name := range s.order {
		st := s.jobs[name]
		st.entry = s.cron.Schedule(st.sched, s.tick(name))
	}
	s.mu.Unlock()
	s.cron.Start()
	s.startLeading()
	return nil
}

// tick is the cron entry of one job. It looks the job up by name at each
// firing, so that Reload can replace Run without rescheduling.
func (s *Scheduler) tick(name string) cron.Job {
	return cron.FuncJob(func() {
		switch err := s.launch(name, CauseSchedule); {
		case errors.Is(err, ErrRunning):
			s.skip(name)
		case errors.Is(err, ErrStandby):
			// Logged once per change of role (leader.go), counted per tick.
			s.opts.Metrics.JobSkipped(name, skipStandby)
		}
	})
}

// skip counts a scheduled tick that found the job's previous run still
// going, and logs it once per run: a run that hangs for an hour on an
// "@every 1m" schedule gives one line, not sixty. The run's finish line
// says how many ticks it made skip.
func (s *Scheduler) skip(name string) {
	s.mu.Lock()
	st := s.jobs[name]
	if st == nil || !st.running {
		s.mu.Unlock()
		return
	}
	st.skips++
	first, since, deadline := st.skips == 1, st.since, st.deadline
	s.mu.Unlock()
	s.opts.Metrics.JobSkipped(name, skipRunning)
	if !first {
		return
	}
	attrs := []any{"job", name, "reason", "the run started at " + since.Format(time.RFC3339) + " is still going",
		"running_since", since.Format(time.RFC3339)}
	if !deadline.IsZero() {
		attrs = append(attrs, "deadline", deadline.Format(time.RFC3339))
	}
	attrs = append(attrs, "note", "later ticks skipped during this run are counted in batchd_job_skipped_total, not logged")
	s.log.Warn("skipped scheduled run: the previous run is still running", attrs...)
}

// Trigger starts a run of the job now, in the background. It returns
// ErrRunning when the job is running, ErrUnknownJob for an unknown name,
// ErrStandby while another instance leads, and ErrNotRunning before Start
// or once Stop has begun.
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
			s.initMetrics(name)
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
			// Wait for a schedule firing in progress: it may be updating
			// the status line, which reads the ledger.
			<-s.cron.Stop().Done()
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

// ServeAdmin serves h (usually AdminHandler's) on ln in the scheduler's
// group until Shutdown stops it. Bind ln before READY=1, so that a bind
// failure fails start-up. If serving fails, the group fails: Failed is
// closed and Err says why; the caller should then shut down.
func (s *Scheduler) ServeAdmin(ln net.Listener, h http.Handler) {
	s.group.Go(func() error { return ServeListener(s.auxCtx, ln, h) })
}

// StartWatchdog runs Watchdog in the scheduler's group until Shutdown.
func (s *Scheduler) StartWatchdog() {
	s.group.Go(func() error {
		s.Watchdog(s.auxCtx)
		return nil
	})
}

// Failed is closed when a member of the scheduler's group failed (the
// admin server stopped serving), and by Shutdown. Err says why.
func (s *Scheduler) Failed() <-chan struct{} { return s.groupCtx.Done() }

// Err is the first failure of a member of the scheduler's group, or nil.
func (s *Scheduler) Err() error {
	if s.groupCtx.Err() == nil {
		return nil
	}
	if err := context.Cause(s.groupCtx); !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// Shutdown stops the daemon in order, and then closes the ledger:
//
//  1. stop scheduling: no schedule, trigger, catch-up or chain starts a
//     run any more (STOPPING=1);
//  2. drain: cancel the runs in progress and wait for them until ctx is
//     done (give it shutdown_timeout);
//  3. stop the admin server and the watchdog;
//  4. wait for the whole group: every run, the admin server (its requests
//     in progress included), the watchdog and the leader loop;
//  5. resign the leader lease (best effort), so that a standby takes
//     over at once;
//  6. call closeLedger (nil: none), when no goroutine of the group can
//     touch the ledger any more.
//
// When ctx ends before the runs return, their ctx is cancelled already;
// Shutdown waits a little longer for the group (at most groupGrace) and,
// if a run still has not returned, leaves the ledger open and returns an
// error: the process should exit, which releases the ledger's lock, as a
// crash would. It never closes the ledger under a running job. The error
// joins the drain, group and close errors. Call Shutdown once.
func (s *Scheduler) Shutdown(ctx context.Context, closeLedger func() error) error {
	drainErr := s.Stop(ctx)
	s.stopAux()
	done := make(chan error, 1)
	go func() { done <- s.group.Wait() }()
	var groupErr error
	select {
	case groupErr = <-done:
	case <-time.After(s.groupGrace):
		what := "the admin server"
		if still := s.runningNames(); len(still) > 0 {
			what = fmt.Sprintf("jobs %v", still)
		}
		s.log.Error("shutdown: " + what + " did not return in time; leaving the ledger open for the process exit to release")
		return errors.Join(drainErr, fmt.Errorf("shutdown: %s still running %s after the drain; the ledger was not closed", what, s.groupGrace))
	}
	if groupErr != nil {
		s.log.Error("daemon goroutine failed", "error", groupErr.Error())
	}
	s.resign()
	var closeErr error
	if closeLedger != nil {
		if closeErr = closeLedger(); closeErr != nil {
			closeErr = fmt.Errorf("close the ledger: %w", closeErr)
		}
	}
	return errors.Join(drainErr, groupErr, closeErr)
}
