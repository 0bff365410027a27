package daemon

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/metrics"
)

// waitUntil polls cond until it holds, failing the test after waitLimit.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settled waits until the job's run is recorded: its finish line is
// logged before its metrics, its success and its record, which come last.
func settled(t *testing.T, s *Scheduler, name string) {
	t.Helper()
	waitUntil(t, name+"'s run is recorded", func() bool { return !jobHealth(t, s, name).Running })
}

func TestTimedOutOrStopped(t *testing.T) {
	t.Parallel()
	// A run's deadline, then a stop: timed out, whatever comes after.
	ctx, cancel := withDeadline(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	if !timedOut(ctx) {
		t.Errorf("cause %v: want a timeout", context.Cause(ctx))
	}
	if got := outcomeOf(ctx, result{}); got != OutcomeFailed {
		t.Errorf("nil returned past the deadline: outcome %q, want failed", got)
	}
	if got := timeoutError(ctx, errors.New("list /inbox: connection lost")); !strings.Contains(got, "deadline of 1ms") || !strings.Contains(got, "list /inbox") {
		t.Errorf("timeout error %q: want the deadline and the run's own error", got)
	}
	if got := timeoutError(ctx, context.Canceled); strings.Contains(got, "returned") {
		t.Errorf("timeout error %q repeats the cancellation", got)
	}
	// A stop, then the deadline: stopped (canceled), not timed out.
	parent, stop := context.WithCancelCause(context.Background())
	stop(ErrStopping)
	ctx2, cancel2 := withDeadline(parent, time.Millisecond)
	defer cancel2()
	passed, cancelPassed := context.WithTimeout(context.Background(), 2*time.Millisecond)
	defer cancelPassed()
	<-passed.Done() // ctx2's deadline has passed too; the first cause must win
	if timedOut(ctx2) || outcomeOf(ctx2, result{}) != OutcomeCanceled {
		t.Errorf("stopped run: timedOut=%v outcome=%q, want a canceled run", timedOut(ctx2), outcomeOf(ctx2, result{}))
	}
	// No timeout: no deadline.
	ctx3, cancel3 := withDeadline(context.Background(), 0)
	defer cancel3()
	if _, ok := ctx3.Deadline(); ok {
		t.Error("a zero timeout set a deadline")
	}
}

// TestDeadlineCancelsAndRecordsTimeout: a run that goes past its deadline
// has its ctx cancelled with ErrTimeout, returns, and is recorded failed
// with source timeout in the log, /healthz and the metrics; the next run
// starts normally.
func TestDeadlineCancelsAndRecordsTimeout(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	m := metrics.New()
	var runs atomic.Int32
	causes := make(chan error, 4)
	job := Job{Name: "ingest", Spec: yearly, Timeout: 100 * time.Millisecond, Run: func(ctx context.Context) (string, error) {
		if runs.Add(1) > 1 {
			return "quick", nil
		}
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return "2 files accepted", ctx.Err()
	}}
	s := newStarted(t, []Job{job}, Options{Logger: logs.logger(), Metrics: m})
	if err := s.Trigger("ingest"); err != nil {
		t.Fatal(err)
	}
	if h := jobHealth(t, s, "ingest"); h.Timeout != "100ms" || !h.Running || h.Deadline.Sub(h.Since) != 100*time.Millisecond {
		t.Errorf("health while running = %+v, want timeout 100ms and a deadline 100ms after the start", h)
	}
	if cause := recv(t, causes, "the run's cancellation"); !errors.Is(cause, ErrTimeout) {
		t.Errorf("run ctx cause = %v, want ErrTimeout", cause)
	}
	fin := logs.waitFor(t, 1, "job finished", map[string]string{"job": "ingest"})[0]
	if fin.attrs["outcome"] != "failed" || fin.attrs["source"] != "timeout" || !strings.Contains(fin.attrs["error"], "deadline of 100ms") {
		t.Errorf("finish line %v: want failed, source timeout, the deadline in the error", fin)
	}
	settled(t, s, "ingest")
	h := jobHealth(t, s, "ingest")
	if h.LastOutcome != OutcomeFailed || h.LastErrorSource != "timeout" || h.Failing == nil || h.Failing.Source != "timeout" {
		t.Errorf("health = %+v, want the job failing with source timeout", h)
	}
	if f := s.Health().Failures; len(f) != 1 || f[0].Source != "timeout" || !strings.Contains(f[0].Error, "timeout") {
		t.Errorf("failures = %+v, want one timeout", f)
	}
	for series, want := range map[string]float64{
		"batchd_job_failures_total|timeout": 1,
		"batchd_job_runs_total|failed":      1,
	} {
		name, label, _ := strings.Cut(series, "|")
		key := "source"
		if name == "batchd_job_runs_total" {
			key = "outcome"
		}
		if v := gather(t, m, name, map[string]string{"job": "ingest", key: label}); v != want {
			t.Errorf("%s{%s=%q} = %v, want %v", name, key, label, v, want)
		}
	}
	// The next run is not hindered and clears the failure.
	if err := s.Trigger("ingest"); err != nil {
		t.Fatalf("trigger after the timeout: %v", err)
	}
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "ingest", "outcome": "ok"})
	settled(t, s, "ingest")
	if f := s.Health().Failures; len(f) != 0 {
		t.Errorf("failures after a success = %+v", f)
	}
}

// TestRunIgnoringCancellationIsReportedStuck: a run that does not return
// after its deadline cancelled it is reported stuck once CancelGrace has
// passed (logged, counted, /healthz failing), stays marked running so no
// second run overlaps it, and when it finally returns its timeout is not
// counted twice.
func TestRunIgnoringCancellationIsReportedStuck(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	m := metrics.New()
	var runs atomic.Int32
	release := make(chan struct{})
	job := Job{Name: "submit", Spec: yearly, Timeout: 50 * time.Millisecond, Run: func(ctx context.Context) (string, error) {
		if runs.Add(1) == 1 {
			<-release // deaf to ctx
		}
		return "done", nil
	}}
	s := newStarted(t, []Job{job}, Options{Logger: logs.logger(), Metrics: m, CancelGrace: 50 * time.Millisecond})
	if err := s.Trigger("submit"); err != nil {
		t.Fatal(err)
	}
	stuck := logs.waitFor(t, 1, "job run stuck past its deadline", map[string]string{"job": "submit", "source": "timeout"})[0]
	if !strings.Contains(stuck.attrs["error"], "has not returned") {
		t.Errorf("stuck line %v: want it to say the run has not returned", stuck)
	}
	h := jobHealth(t, s, "submit")
	if !h.Running || !h.Stuck || h.Failing == nil || h.Failing.Source != "timeout" {
		t.Errorf("health = %+v, want running, stuck and failing with source timeout", h)
	}
	if v := gather(t, m, "batchd_job_failures_total", map[string]string{"job": "submit", "source": "timeout"}); v != 1 {
		t.Errorf("timeouts counted while stuck = %v, want 1", v)
	}
	if err := s.Trigger("submit"); !errors.Is(err, ErrRunning) {
		t.Errorf("trigger while stuck = %v, want ErrRunning (no overlapping run)", err)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("%d runs started while the first was stuck, want 1", n)
	}
	close(release)
	fin := logs.waitFor(t, 1, "job finished", map[string]string{"job": "submit"})[0]
	if fin.attrs["outcome"] != "failed" || fin.attrs["source"] != "timeout" {
		t.Errorf("finish line %v: want failed with source timeout although it returned nil", fin)
	}
	settled(t, s, "submit")
	if v := gather(t, m, "batchd_job_failures_total", map[string]string{"job": "submit", "source": "timeout"}); v != 1 {
		t.Errorf("timeouts counted after it returned = %v, want still 1", v)
	}
	if v := gather(t, m, "batchd_job_runs_total", map[string]string{"job": "submit", "outcome": "failed"}); v != 1 {
		t.Errorf("failed runs = %v, want 1", v)
	}
	if err := s.Trigger("submit"); err != nil {
		t.Fatalf("trigger once the stuck run returned: %v", err)
	}
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "submit", "outcome": "ok"})
	settled(t, s, "submit")
	if h := jobHealth(t, s, "submit"); h.Stuck || h.Failing != nil {
		t.Errorf("health after a success = %+v", h)
	}
}

// TestSkipLoggedOncePerRunAndCounted: every tick that finds the run still
// going is counted, one line per run is logged with the reason, and the
// run's finish line says how many ticks it made skip.
func TestSkipLoggedOncePerRunAndCounted(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	m := metrics.New()
	started := make(chan struct{}, 4)
	release := make(chan struct{})
	job := Job{Name: "reconcile", Spec: "@every 1s", Run: func(ctx context.Context) (string, error) {
		started <- struct{}{}
		<-release
		return "done", nil
	}}
	s := newStarted(t, []Job{job}, Options{Logger: logs.logger(), Metrics: m})
	defer close(release)
	recv(t, started, "the first run")
	skipped := func() float64 {
		return gather(t, m, "batchd_job_skipped_total", map[string]string{"job": "reconcile"})
	}
	waitUntil(t, "two ticks were skipped", func() bool { return skipped() >= 2 })
	lines := logs.matching("skipped scheduled run: the previous run is still running", map[string]string{"job": "reconcile"})
	if len(lines) != 1 {
		t.Fatalf("%d skip lines for one run after %v skips, want 1:\n%s", len(lines), skipped(), logs.dump())
	}
	if r := lines[0].attrs["reason"]; !strings.HasPrefix(r, "the run started at ") || !strings.HasSuffix(r, " is still going") {
		t.Errorf("skip reason %q", r)
	}
	if h := jobHealth(t, s, "reconcile"); !h.Running || h.Skipped < 2 {
		t.Errorf("health = %+v, want running with at least 2 ticks skipped", h)
	}
	release <- struct{}{} // end the first run
	fin := logs.waitFor(t, 1, "job finished", map[string]string{"job": "reconcile"})[0]
	if n := fin.attrs["skipped_ticks"]; n == "" || n == "0" || n == "1" {
		t.Errorf("finish line %v: want skipped_ticks >= 2", fin)
	}
	// The next run, skipped too, gets its own line.
	recv(t, started, "the second run")
	logs.waitFor(t, 2, "skipped scheduled run: the previous run is still running", map[string]string{"job": "reconcile"})
}

// TestLastSuccessExportedAtZeroFromStart: every job's last-success series
// reads 0 from New, before any run, and its counters 0; Start sets
// batchd_start_time_seconds from the scheduler's clock; a success then
// sets the last success to the run's start.
func TestLastSuccessExportedAtZeroFromStart(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	m := metrics.New()
	clock := clocktest.New(clocktest.Monday)
	s, err := New([]Job{okJob("ingest", yearly), okJob("reconcile", yearly)}, Options{Logger: logs.logger(), Metrics: m, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, job := range []string{"ingest", "reconcile"} {
		if v := gather(t, m, "batchd_job_last_success_timestamp_seconds", map[string]string{"job": job}); v != 0 {
			t.Errorf("%s last success before any run = %v, want 0", job, v)
		}
		for _, src := range []string{"timeout", "sftp", "batchd"} {
			if v := gather(t, m, "batchd_job_failures_total", map[string]string{"job": job, "source": src}); v != 0 {
				t.Errorf("%s failures{source=%s} = %v, want 0", job, src, v)
			}
		}
		for _, o := range []string{"ok", "failed"} {
			if v := gather(t, m, "batchd_job_runs_total", map[string]string{"job": job, "outcome": o}); v != 0 {
				t.Errorf("%s runs{outcome=%s} = %v, want 0", job, o, v)
			}
		}
		if v := gather(t, m, "batchd_job_skipped_total", map[string]string{"job": job}); v != 0 {
			t.Errorf("%s skipped = %v, want 0", job, v)
		}
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_ = s.Stop(ctx)
	})
	if v := gather(t, m, "batchd_start_time_seconds", nil); v != float64(clocktest.Monday.Unix()) {
		t.Errorf("batchd_start_time_seconds = %v, want %v", v, clocktest.Monday.Unix())
	}
	clock.Advance(time.Hour)
	if err := s.Trigger("ingest"); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "ingest", "outcome": "ok"})
	settled(t, s, "ingest")
	if v := gather(t, m, "batchd_job_last_success_timestamp_seconds", map[string]string{"job": "ingest"}); v != float64(clocktest.Monday.Add(time.Hour).Unix()) {
		t.Errorf("ingest last success = %v, want the run's start", v)
	}
	if v := gather(t, m, "batchd_job_last_success_timestamp_seconds", map[string]string{"job": "reconcile"}); v != 0 {
		t.Errorf("reconcile last success = %v, want still 0", v)
	}
}
