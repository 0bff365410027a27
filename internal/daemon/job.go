package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Job is one named unit of work run on a cron schedule.
type Job struct {
	// Name identifies the job in logs, metrics, /healthz and the admin URL
	// POST /v1/jobs/{name}: lower-case letters, digits, '-' and '_'.
	Name string
	// Spec is the schedule: five cron fields (minute hour day-of-month
	// month day-of-week), such as "0 6 * * *", or a descriptor such as
	// "@hourly", "@daily" or "@every 5m" (at least 1s). It is read in
	// Options.Location; a CRON_TZ= or TZ= prefix is refused, so that one
	// setting decides the time zone of every schedule.
	Spec string
	// Run does the work. It returns a one-line summary for the log (it may
	// be non-empty on error too) and an error. ctx is cancelled when the
	// scheduler starts to stop (see Scheduler.Stop): Run should then start
	// nothing new, finish what must not be cut in half, and return. Run may
	// ask for another job with RequestRun.
	Run func(ctx context.Context) (summary string, err error)
	// Timeout is the run's deadline, from its start; 0 means none. Past it
	// the run's ctx is cancelled with cause ErrTimeout (context.Cause) and
	// the run, whatever it returns, is recorded failed with source
	// "timeout". A run that does not return Options.CancelGrace after that
	// is reported stuck (see Scheduler.Health); it stays marked running,
	// so no second run of the job overlaps it.
	Timeout time.Duration
	// Args names the arguments a manual run may be given (POST
	// /v1/jobs/{name}?from=…&to=…, Scheduler.TriggerWith), which Run
	// reads with Args(ctx); a run given any other is refused
	// (ErrBadArgs). Scheduled runs have none.
	Args []string
}

// Outcome is how a job run ended.
type Outcome string

// The outcomes of a run. They are metric label values
// (batchd_job_runs_total{outcome}) and the "outcome" of the run's log line.
// Only OutcomeOK is a success: only it is recorded as the job's last
// success (Options.RecordSuccess) and serves chains. A failed or panicked
// run makes /healthz unhealthy until the job next succeeds.
const (
	OutcomeOK Outcome = "ok" // Run returned a nil error and was not interrupted
	// OutcomeFailed: Run returned an error, including one that says it left
	// work undone (submit.ErrIncomplete), or a ledger failure even while
	// stopping.
	// A run cancelled at its deadline (Job.Timeout) is failed too, with
	// source "timeout".
	OutcomeFailed Outcome = "failed"
	// OutcomeCanceled: the run's ctx was cancelled (batchd is stopping)
	// before it returned, whatever it returned: an interrupted run is not a
	// success, and not a failure worth an alert either.
	OutcomeCanceled Outcome = "canceled"
	OutcomePanic    Outcome = "panic" // Run panicked; the panic was recovered
)

// failing reports whether the outcome makes the job unhealthy.
func (o Outcome) failing() bool { return o == OutcomeFailed || o == OutcomePanic }

// Cause says why a run started. It appears in the run's log line.
type Cause string

// The causes of a run.
const (
	CauseSchedule Cause = "schedule" // the cron schedule fired
	CauseManual   Cause = "manual"   // Trigger, e.g. POST /v1/jobs/{name}
	CauseCatchUp  Cause = "catch-up" // a run was missed while batchd was down
	CauseChain    Cause = "chain"    // another job asked for it (Chain, RequestRun)
	CauseLead     Cause = "lead"     // this instance became leader (Options.OnLead)
)

// Errors returned by Trigger, Reload and Stop.
var (
	// ErrRunning means the job is running already; runs of one job never
	// overlap. The admin API answers 409.
	ErrRunning = errors.New("job is already running")
	// ErrUnknownJob means no job has that name. The admin API answers 404.
	ErrUnknownJob = errors.New("unknown job")
	// ErrNotRunning means the scheduler has not been started or is
	// stopping. The admin API answers 503.
	ErrNotRunning = errors.New("scheduler is not running")
	// ErrTimeout is wrapped by the cause of the cancellation of a run's ctx
	// when the run passes its Job.Timeout (context.Cause).
	ErrTimeout = errors.New("timeout")
	// ErrStandby means another instance leads (holds the ledger's lease)
	// and runs the jobs; this one runs none until it leads. The admin API
	// answers 503, naming the leader.
	ErrStandby = errors.New("this instance is a standby: another instance leads and runs the jobs")
	// ErrStopping is the cause of the cancellation of a run's ctx when the
	// scheduler stops (context.Cause).
	ErrStopping = errors.New("batchd is stopping")
)

// newParser accepts the standard five fields and descriptors, as
// documented for Job.Spec.
func newParser() cron.Parser {
	return cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
}

// parseSpec checks and parses one job's schedule. It recovers from panics
// in the cron parser, which a malformed time-zone prefix can cause, so that
// a bad configuration value is an error and never a crash.
func parseSpec(p cron.Parser, spec string) (sched cron.Schedule, err error) {
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		return nil, errors.New("a time zone prefix is not allowed; the schedule time zone applies to every job")
	}
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("invalid schedule: %v", r)
		}
	}()
	if d, ok := strings.CutPrefix(spec, "@every "); ok {
		if dur, perr := time.ParseDuration(strings.TrimSpace(d)); perr == nil && dur < time.Second {
			return nil, fmt.Errorf("@every needs an interval of at least 1s, not %s", d)
		}
	}
	sched, err = p.Parse(spec)
	if err != nil {
		return nil, err
	}
	return sched, nil
}

// validName reports whether name may be used in a URL path and a metric
// label without escaping.
func validName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// compiled is a validated job with its parsed schedule.
type compiled struct {
	job   Job
	sched cron.Schedule
}

// compile validates every job, reporting all problems at once.
func compile(p cron.Parser, jobs []Job) ([]compiled, error) {
	var errs []error
	seen := map[string]bool{}
	out := make([]compiled, 0, len(jobs))
	for i, j := range jobs {
		switch {
		case !validName(j.Name):
			errs = append(errs, fmt.Errorf("job %d: invalid name %q (use a-z, 0-9, '-' and '_')", i, j.Name))
			continue
		case seen[j.Name]:
			errs = append(errs, fmt.Errorf("job %s: defined twice", j.Name))
			continue
		case j.Run == nil:
			errs = append(errs, fmt.Errorf("job %s: no Run function", j.Name))
			continue
		case j.Timeout < 0:
			errs = append(errs, fmt.Errorf("job %s: negative timeout %s (0 means none)", j.Name, j.Timeout))
			continue
		}
		seen[j.Name] = true
		sched, err := parseSpec(p, j.Spec)
		if err != nil {
			errs = append(errs, fmt.Errorf("job %s: schedule %q: %w", j.Name, j.Spec, err))
			continue
		}
		out = append(out, compiled{job: j, sched: sched})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
