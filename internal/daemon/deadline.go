package daemon

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// withDeadline gives a run its deadline: past timeout, ctx is cancelled
// with a cause wrapping ErrTimeout, which the job can tell apart from a
// stop (ErrStopping) with context.Cause. A timeout of 0 sets none.
func withDeadline(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, timeout,
		fmt.Errorf("%w: the run was still going after its deadline of %s and was cancelled", ErrTimeout, timeout))
}

// timedOut reports whether ctx was cancelled by the run's deadline rather
// than by a stop. The first cause wins: a run cancelled by a stop and then
// reaching its deadline was stopped, not timed out.
func timedOut(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrTimeout)
}

// timeoutError words a run cancelled at its deadline: the deadline, then
// what the run returned when that says more than the cancellation itself.
func timeoutError(ctx context.Context, err error) string {
	msg := context.Cause(ctx).Error()
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrTimeout) {
		msg += "; the run returned: " + err.Error()
	}
	return msg
}

// stuckWatch reports a run that has not returned CancelGrace after its
// deadline cancelled it. Such a run ignores its ctx (or is blocked where
// no ctx reaches); the scheduler cannot kill a goroutine, so the job stays
// marked running and no second run overlaps it, but the operator must
// learn of it: it is logged, counted as a timeout failure and shown
// failing by /healthz until the job next succeeds.
type stuckWatch struct {
	timer *time.Timer // nil: the run has no deadline
	mu    sync.Mutex
	done  bool // the run returned
	stuck bool // it was reported stuck (and its timeout counted)
}

// watchStuck starts the watch of one run of job, started at start.
func (s *Scheduler) watchStuck(st *jobState, job Job, start time.Time) *stuckWatch {
	w := &stuckWatch{}
	if job.Timeout <= 0 {
		return w
	}
	w.timer = time.AfterFunc(job.Timeout+s.opts.CancelGrace, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.done {
			w.stuck = s.markStuck(st, job, start)
		}
	})
	return w
}

// stop ends the watch when the run returns, and says whether the run was
// reported stuck, so that its timeout is not counted twice.
func (w *stuckWatch) stop() bool {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	return w.stuck
}

// markStuck records that the run of job started at start did not return
// after its deadline and the grace, and reports whether it did so (the
// run may have ended meanwhile).
func (s *Scheduler) markStuck(st *jobState, job Job, start time.Time) bool {
	now := s.now()
	msg := fmt.Sprintf("timeout: the run started at %s passed its deadline of %s and has not returned %s after it was cancelled; "+
		"it stays marked running, so no other run of %s starts until it returns; restart batchd if it does not",
		start.Format(time.RFC3339), job.Timeout, s.opts.CancelGrace, job.Name)
	s.mu.Lock()
	if !st.running || !st.since.Equal(start) {
		s.mu.Unlock()
		return false
	}
	st.stuck = true
	since := now
	if st.failing != nil {
		since = st.failing.Since
	}
	st.failing = &Failure{Job: job.Name, Source: string(sourceTimeout), Error: msg, Since: since, At: now}
	s.lastErr = &RunError{Job: job.Name, At: now, Error: msg, Source: string(sourceTimeout)}
	s.mu.Unlock()
	// Counted before the line is logged, so that whoever reads the line
	// sees the count.
	s.opts.Metrics.JobFailed(job.Name, string(sourceTimeout))
	s.log.Error("job run stuck past its deadline", "job", job.Name, "running_since", start.Format(time.RFC3339),
		"timeout", job.Timeout.String(), "error", msg, "source", string(sourceTimeout))
	s.updateStatus()
	return true
}

// skipsOf returns the ticks skipped during the job's run in progress.
func (s *Scheduler) skipsOf(st *jobState) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return st.skips
}
