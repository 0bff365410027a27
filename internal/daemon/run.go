package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"runtime/debug"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/state/kv"
)

// launch starts a run of the job in its own goroutine, unless the job is
// running or the scheduler is not.
func (s *Scheduler) launch(name string, cause Cause) error {
	_, err := s.launchWith(name, cause, nil)
	return err
}

// launchWith is launch with a manual run's arguments (Args); it returns
// the run's number (JobHealth.Runs).
func (s *Scheduler) launchWith(name string, cause Cause, args url.Values) (uint64, error) {
	s.mu.Lock()
	n, err := s.startWith(name, cause, args)
	s.mu.Unlock()
	if err == nil {
		s.updateStatus()
	}
	return n, err
}

// startLocked marks the job running and starts its goroutine. A chained
// request for a running job is remembered and served when the run ends,
// so that work produced meanwhile (new pending rows) is not left until the
// next scheduled run. s.mu must be held.
func (s *Scheduler) startLocked(name string, cause Cause) error {
	_, err := s.startWith(name, cause, nil)
	return err
}

// startWith is startLocked with a manual run's arguments, returning the
// run's number. s.mu must be held.
func (s *Scheduler) startWith(name string, cause Cause, args url.Values) (uint64, error) {
	if s.state != started {
		return 0, ErrNotRunning
	}
	st := s.jobs[name]
	if st == nil {
		return 0, fmt.Errorf("%w %q", ErrUnknownJob, name)
	}
	if err := st.job.checkArgs(args); err != nil {
		return 0, err
	}
	if !s.leadingLocked() {
		return 0, ErrStandby
	}
	if st.running {
		if cause == CauseChain {
			st.pending = true
		}
		return 0, fmt.Errorf("%s: %w", name, ErrRunning)
	}
	st.runs++
	n := st.runs
	st.running, st.since = true, s.now()
	st.skips, st.stuck, st.deadline = 0, false, time.Time{}
	if st.job.Timeout > 0 {
		st.deadline = st.since.Add(st.job.Timeout)
	}
	s.wg.Add(1)
	ctx, job, since := s.role.term, st.job, st.since
	if len(args) > 0 {
		ctx = context.WithValue(ctx, argsKey{}, args)
	}
	// The run joins the group, so that Shutdown waits for it before the
	// ledger closes even when Stop gave up waiting. It returns nil: a failed
	// run is an outcome, not a reason to stop the daemon.
	s.group.Go(func() error {
		s.run(ctx, st, job, cause, since, n)
		return nil
	})
	return n, nil
}

// result is what one call of Job.Run produced.
type result struct {
	summary string
	err     error
	panic   any
	stack   []byte
}

// call runs the job, recovering a panic into the result.
func call(ctx context.Context, job Job) (res result) {
	defer func() {
		if r := recover(); r != nil {
			res = result{panic: r, stack: debug.Stack(), err: fmt.Errorf("panic: %v", r)}
		}
	}()
	res.summary, res.err = job.Run(ctx)
	return res
}

// run executes one run under its deadline: calls the job, logs its one
// summary line, records metrics and success, then serves chains.
func (s *Scheduler) run(ctx context.Context, st *jobState, job Job, cause Cause, start time.Time, n uint64) {
	defer s.wg.Done()
	runCtx, cancel := withDeadline(ctx, job.Timeout)
	watch := s.watchStuck(st, job, start)
	t0 := time.Now()
	res := call(context.WithValue(runCtx, runKey{}, &runRef{s: s, job: job.Name}), job)
	d := time.Since(t0)
	// Freeze the verdict: a deadline that passes after the run returned
	// does not make it a timeout. The run timed out if its deadline fired
	// first; otherwise it is judged by ctx, which a stop cancels.
	cancel()
	if timedOut(runCtx) {
		ctx = runCtx
	}
	stuckCounted := watch.stop()
	lr := &lastRun{n: n, cause: cause, start: start, end: s.now(), summary: res.summary, outcome: outcomeOf(ctx, res)}
	switch {
	case errors.Is(res.err, state.ErrRewound):
		// The ledger's database went back in time: this run's write was
		// refused and recorded nothing. Every job stops; the takeover
		// that follows applies the restore rules (rewind.go).
		lr.outcome, lr.err, lr.source = OutcomeFailed, res.err.Error(), sourceRewind
	case errors.Is(res.err, kv.ErrFenced):
		// Another instance took the lease: this run's write was refused
		// and recorded nothing. Failed, filed apart from a broken ledger.
		lr.outcome, lr.err, lr.source = OutcomeFailed, res.err.Error(), sourceFenced
	case errors.Is(context.Cause(ctx), ErrLostLeadership) && (res.err == nil || errors.Is(res.err, context.Canceled)):
		// Cut short because this instance stopped leading: interrupted,
		// like a stop, even when the ledger wrapped the cancellation.
		lr.outcome, lr.err = OutcomeCanceled, "interrupted: "+context.Cause(ctx).Error()
	case lr.outcome == OutcomeFailed && timedOut(ctx) && payment.SourceOf(res.err) != payment.SourceLedger:
		lr.err, lr.source = timeoutError(ctx, res.err), sourceTimeout
	case res.err != nil:
		lr.err, lr.source = res.err.Error(), payment.SourceOf(res.err)
	case lr.outcome == OutcomeCanceled:
		lr.err = "interrupted: " + context.Cause(ctx).Error()
	}
	lr.skips = s.skipsOf(st)
	s.logRun(job.Name, lr, d, res)
	s.opts.Metrics.ObserveJob(job.Name, string(lr.outcome), d)
	if res.panic != nil {
		s.opts.Metrics.JobPanicked(job.Name)
	}
	if lr.outcome.failing() && !(stuckCounted && lr.source == sourceTimeout) {
		s.opts.Metrics.JobFailed(job.Name, sourceName(lr.source))
	}
	if lr.outcome == OutcomeOK {
		s.recordSuccess(job.Name, start)
	}
	for _, next := range s.finish(st, job.Name, lr) {
		s.request(next, job.Name)
	}
	switch lr.source {
	case sourceFenced:
		s.stepDown(fmt.Sprintf("a write of job %s was fenced: another instance holds the lease", job.Name))
	case sourceRewind:
		s.rewindSeen(job.Name, res.err)
	}
	s.updateStatus()
}

// outcomeOf classifies a finished run. Only a run that returned nil and
// was not interrupted succeeded. A run cancelled at its deadline failed,
// whatever it returned: it may have returned nil with work left. A run
// whose ctx was cancelled because batchd is stopping is canceled whatever
// it returned: its error is most likely the cancellation itself; it is not
// a failure worth an alert. A ledger failure is a failure even then: it
// is what stops every job. Any other error, including one that says the
// run left work undone, is a failure.
func outcomeOf(ctx context.Context, res result) Outcome {
	switch {
	case res.panic != nil:
		return OutcomePanic
	case res.err != nil && payment.SourceOf(res.err) == payment.SourceLedger:
		return OutcomeFailed
	case timedOut(ctx):
		return OutcomeFailed
	case ctx.Err() != nil:
		return OutcomeCanceled
	case res.err != nil:
		return OutcomeFailed
	default:
		return OutcomeOK
	}
}

// logRun writes the one summary line of a run.
func (s *Scheduler) logRun(name string, lr *lastRun, d time.Duration, res result) {
	level := slog.LevelInfo
	switch lr.outcome {
	case OutcomeCanceled:
		level = slog.LevelWarn
	case OutcomeFailed, OutcomePanic:
		level = slog.LevelError
	}
	attrs := []slog.Attr{
		slog.String("job", name), slog.String("cause", string(lr.cause)),
		slog.String("outcome", string(lr.outcome)),
		slog.String("duration", d.Round(time.Millisecond).String()),
		slog.String("summary", lr.summary),
	}
	if lr.err != "" {
		attrs = append(attrs, slog.String("error", lr.err))
	}
	if lr.source != "" {
		attrs = append(attrs, slog.String("source", string(lr.source)))
	}
	if lr.skips > 0 {
		attrs = append(attrs, slog.Int("skipped_ticks", lr.skips))
	}
	if res.stack != nil {
		attrs = append(attrs, slog.String("stack", string(res.stack)))
	}
	s.log.LogAttrs(context.Background(), level, "job finished", attrs...)
}

// recordSuccess persists and exposes the start of a successful run.
func (s *Scheduler) recordSuccess(name string, start time.Time) {
	s.opts.Metrics.SetJobLastSuccess(name, start)
	if s.opts.RecordSuccess == nil {
		return
	}
	if err := s.opts.RecordSuccess(name, start); err != nil {
		s.log.Error("record last successful run", "job", name, "error", err.Error())
	}
}

// finish records the run in the job's state, ends it, restarts it at once
// if a chained request arrived meanwhile, and returns the jobs chained to
// a success.
func (s *Scheduler) finish(st *jobState, name string, lr *lastRun) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	st.running, st.last = false, lr
	switch {
	case lr.outcome == OutcomeOK:
		st.lastSuccess, st.failing = lr.start, nil
	case lr.outcome.failing():
		// The job stays failing, and /healthz unhealthy, until it next
		// succeeds; an interrupted run changes nothing.
		since := lr.end
		if st.failing != nil {
			since = st.failing.Since
		}
		st.failing = &Failure{Job: name, Source: sourceName(lr.source), Error: lr.err, Since: since, At: lr.end}
		s.lastErr = &RunError{Job: name, At: lr.end, Error: lr.err, Source: sourceName(lr.source)}
	}
	if st.pending && s.state == started {
		st.pending = false
		if s.jobs[name] == st { // not removed by Reload meanwhile
			if err := s.startLocked(name, CauseChain); err != nil && !errors.Is(err, ErrStandby) {
				s.log.Warn("restart job for a chained request", "job", name, "error", err.Error())
			}
		}
	}
	if lr.outcome != OutcomeOK {
		return nil
	}
	return append([]string(nil), s.chains[name]...)
}

// Chain makes every successful run of after request a run of then, as
// RequestRun does: at once if then is idle, or again as soon as its
// current run ends. Both jobs must exist.
func (s *Scheduler) Chain(after, then string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range []string{after, then} {
		if s.jobs[name] == nil {
			return fmt.Errorf("chain %s -> %s: %w %q", after, then, ErrUnknownJob, name)
		}
	}
	s.chains[after] = append(s.chains[after], then)
	return nil
}

// request starts name on behalf of the job from, or has it run again when
// its current run ends.
func (s *Scheduler) request(name, from string) {
	err := s.launch(name, CauseChain)
	switch {
	case err == nil:
		s.log.Info("job started on request of another job", "job", name, "requested_by", from)
	case errors.Is(err, ErrRunning):
		s.log.Info("job requested while running; it will run again when this run ends", "job", name, "requested_by", from)
	case errors.Is(err, ErrNotRunning):
		s.log.Debug("job request ignored: scheduler stopping", "job", name, "requested_by", from)
	case errors.Is(err, ErrStandby):
		s.log.Debug("job request ignored: this instance is a standby now", "job", name, "requested_by", from)
	default:
		s.log.Warn("job request failed", "job", name, "requested_by", from, "error", err.Error())
	}
}

// runKey is the context key of the run a ctx belongs to.
type runKey struct{}

// runRef identifies the scheduler and job of a run.
type runRef struct {
	s   *Scheduler
	job string
}

// RequestRun asks the scheduler running the current job (ctx is the ctx
// given to Job.Run) to run the named job: at once if it is idle, or again
// as soon as its current run ends, so the request is never lost. It is how
// a job hands work on, e.g. an ingest that recorded pending rows requests
// "submit". It returns false when ctx does not come from a Scheduler run
// (a one-shot command), where the caller simply carries on.
func RequestRun(ctx context.Context, job string) bool {
	ref, ok := ctx.Value(runKey{}).(*runRef)
	if !ok {
		return false
	}
	ref.s.request(job, ref.job)
	return true
}
