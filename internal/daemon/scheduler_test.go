package daemon

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/metrics"
)

func TestNewValidates(t *testing.T) {
	t.Parallel()
	run := func(context.Context) (string, error) { return "", nil }
	tests := []struct {
		name string
		jobs []Job
		want string // substring of the error; "" means valid
	}{
		{"valid", []Job{{Name: "ingest", Spec: "@every 5m", Run: run}, {Name: "reconcile", Spec: "0 6 * * 1-5", Run: run}, {Name: "submit", Spec: "@hourly", Run: run}}, ""},
		{"bad spec", []Job{{Name: "ingest", Spec: "61 * * * *", Run: run}}, `job ingest: schedule "61 * * * *"`},
		{"six fields", []Job{{Name: "ingest", Spec: "0 0 6 * * *", Run: run}}, "job ingest"},
		{"empty spec", []Job{{Name: "ingest", Spec: "", Run: run}}, "job ingest"},
		{"sub-second every", []Job{{Name: "ingest", Spec: "@every 500ms", Run: run}}, "at least 1s"},
		{"negative every", []Job{{Name: "ingest", Spec: "@every -5m", Run: run}}, "at least 1s"},
		{"tz prefix", []Job{{Name: "ingest", Spec: "CRON_TZ=Europe/Berlin 0 6 * * *", Run: run}}, "time zone prefix"},
		{"tz prefix without space", []Job{{Name: "ingest", Spec: "CRON_TZ=UTC", Run: run}}, "time zone prefix"},
		{"empty name", []Job{{Name: "", Spec: "@hourly", Run: run}}, "invalid name"},
		{"upper-case name", []Job{{Name: "Ingest", Spec: "@hourly", Run: run}}, "invalid name"},
		{"slash in name", []Job{{Name: "a/b", Spec: "@hourly", Run: run}}, "invalid name"},
		{"duplicate", []Job{{Name: "ingest", Spec: "@hourly", Run: run}, {Name: "ingest", Spec: "@daily", Run: run}}, "defined twice"},
		{"nil run", []Job{{Name: "ingest", Spec: "@hourly", Run: nil}}, "no Run"},
		{"negative timeout", []Job{{Name: "ingest", Spec: "@hourly", Run: run, Timeout: -time.Second}}, "negative timeout"},
		{"all errors at once", []Job{{Name: "a", Spec: "bad", Run: run}, {Name: "b", Spec: "worse", Run: run}}, `job b: schedule "worse"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.jobs, Options{})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestScheduledRunsHappen(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	var n atomic.Int32
	job := Job{Name: "ingest", Spec: "@every 1s", Run: func(context.Context) (string, error) {
		return "run " + string(rune('0'+n.Add(1))), nil
	}}
	newStarted(t, []Job{job}, Options{Logger: logs.logger()})
	got := logs.waitFor(t, 2, "job finished", map[string]string{"job": "ingest", "cause": "schedule", "outcome": "ok"})
	if got[0].attrs["summary"] != "run 1" || got[0].attrs["duration"] == "" {
		t.Errorf("first run line = %v, want summary \"run 1\" and a duration", got[0])
	}
}

func TestPanicIsRecoveredAndCounted(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	m := metrics.New()
	var n atomic.Int32
	job := Job{Name: "submit", Spec: "@every 1s", Run: func(context.Context) (string, error) {
		if n.Add(1) == 1 {
			panic("boom")
		}
		return "fine", nil
	}}
	s := newStarted(t, []Job{job}, Options{Logger: logs.logger(), Metrics: m})
	p := logs.waitFor(t, 1, "job finished", map[string]string{"job": "submit", "outcome": "panic"})[0]
	if p.attrs["error"] != "panic: boom" || !strings.Contains(p.attrs["stack"], "goroutine") {
		t.Errorf("panic line = %v, want error \"panic: boom\" and a stack", p)
	}
	// The scheduler keeps going: the next scheduled run succeeds.
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "submit", "outcome": "ok"})
	if v := gather(t, m, "batchd_job_panics_total", map[string]string{"job": "submit"}); v != 1 {
		t.Errorf("batchd_job_panics_total = %v, want 1", v)
	}
	if v := gather(t, m, "batchd_job_runs_total", map[string]string{"job": "submit", "outcome": "panic"}); v != 1 {
		t.Errorf("runs with outcome panic = %v, want 1", v)
	}
	h := s.Health()
	if !h.Alive || h.LastError == nil || h.LastError.Job != "submit" {
		t.Errorf("health = %+v, want alive with the panic as last error", h)
	}
}

func TestOverlappingScheduledRunIsSkipped(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	m := metrics.New()
	g := newGate()
	defer close(g.release)
	newStarted(t, []Job{{Name: "reconcile", Spec: "@every 1s", Run: g.run}}, Options{Logger: logs.logger(), Metrics: m})
	g.waitStart(t)
	skip := logs.waitFor(t, 1, "skipped scheduled run: the previous run is still running", map[string]string{"job": "reconcile"})
	if !strings.Contains(skip[0].attrs["reason"], "is still going") {
		t.Errorf("skip line %v: no reason", skip[0])
	}
	if skip[0].level != slog.LevelWarn {
		t.Errorf("skip logged at %v, want WARN", skip[0].level)
	}
	if v := gather(t, m, "batchd_job_skipped_total", map[string]string{"job": "reconcile"}); v < 1 {
		t.Errorf("batchd_job_skipped_total = %v, want >= 1", v)
	}
	if len(logs.matching("job finished", nil)) != 0 {
		t.Error("a run finished while the first was still blocked: runs overlapped")
	}
}

func TestTrigger(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	g := newGate()
	s, err := New([]Job{{Name: "ingest", Spec: yearly, Run: g.run}}, Options{Logger: logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Trigger("ingest"); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Trigger before Start = %v, want ErrNotRunning", err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	if err := s.Trigger("ingest"); err != nil {
		t.Fatalf("Trigger: %v", err)
	}
	g.waitStart(t)
	if err := s.Trigger("ingest"); !errors.Is(err, ErrRunning) {
		t.Fatalf("Trigger while running = %v, want ErrRunning", err)
	}
	if err := s.Trigger("nope"); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("Trigger unknown = %v, want ErrUnknownJob", err)
	}
	g.release <- struct{}{}
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "ingest", "cause": "manual", "outcome": "ok"})
	if err := s.Trigger("ingest"); err != nil {
		t.Fatalf("Trigger after the run ended: %v", err)
	}
	g.waitStart(t)
	close(g.release)
}

func TestReload(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	g := newGate()
	s := newStarted(t, []Job{{Name: "reconcile", Spec: yearly, Run: g.run}, okJob("ingest", "@hourly")},
		Options{Logger: logs.logger()})
	if err := s.Trigger("reconcile"); err != nil {
		t.Fatal(err)
	}
	runCtx := g.waitStart(t)

	v2 := Job{Name: "reconcile", Spec: "30 6 * * *", Run: func(context.Context) (string, error) { return "v2", nil }}
	if err := s.Reload([]Job{v2, okJob("ingest", "@hourly")}); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if runCtx.Err() != nil {
		t.Fatal("Reload cancelled the running job")
	}
	h := jobHealth(t, s, "reconcile")
	if h.Schedule != "30 6 * * *" || !h.Running || h.NextRun.Hour() != 6 || h.NextRun.Minute() != 30 {
		t.Fatalf("after reload: %+v, want schedule 30 6 * * *, running, next run at 06:30", h)
	}

	bad := Job{Name: "reconcile", Spec: "99 * * * *", Run: v2.Run}
	if err := s.Reload([]Job{bad, okJob("ingest", "@hourly")}); err == nil || !strings.Contains(err.Error(), "old schedules kept") {
		t.Fatalf("Reload with an invalid spec = %v, want a refusal", err)
	}
	if h2 := jobHealth(t, s, "reconcile"); h2.Schedule != h.Schedule || !h2.NextRun.Equal(h.NextRun) {
		t.Fatalf("after refused reload: %+v, want the previous schedule %q next %v", h2, h.Schedule, h.NextRun)
	}

	// The running job finishes with its old Run; the next run uses the new one.
	g.release <- struct{}{}
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "reconcile", "summary": "gated", "outcome": "ok"})
	if err := s.Trigger("reconcile"); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "reconcile", "summary": "v2"})
}

func TestStopWaitsForRunningJob(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	cancelled, release := make(chan error), make(chan struct{})
	job := Job{Name: "submit", Spec: yearly, Run: func(ctx context.Context) (string, error) {
		<-ctx.Done()
		cancelled <- context.Cause(ctx)
		<-release // finishing in-flight work
		return "3 sent", ctx.Err()
	}}
	s := newStarted(t, []Job{job}, Options{Logger: logs.logger()})
	if err := s.Trigger("submit"); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- s.Stop(context.Background()) }()
	if cause := recv(t, cancelled, "cancellation"); !errors.Is(cause, ErrStopping) {
		t.Errorf("run ctx cause = %v, want ErrStopping", cause)
	}
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) while the job was still running", err)
	default:
	}
	if err := s.Trigger("submit"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Trigger while stopping = %v, want ErrNotRunning", err)
	}
	close(release)
	if err := recv(t, stopped, "Stop"); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "submit", "outcome": "canceled", "summary": "3 sent"})
}

func TestStopGivesUpAtDeadline(t *testing.T) {
	t.Parallel()
	g := newGate()
	s := newStarted(t, []Job{{Name: "reconcile", Spec: yearly, Run: g.run}}, Options{})
	if err := s.Trigger("reconcile"); err != nil {
		t.Fatal(err)
	}
	runCtx := g.waitStart(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := s.Stop(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "reconcile") {
		t.Fatalf("Stop = %v, want a deadline error naming reconcile", err)
	}
	if !errors.Is(context.Cause(runCtx), ErrStopping) {
		t.Errorf("run ctx cause = %v, want ErrStopping", context.Cause(runCtx))
	}
	close(g.release)
	if err := s.Stop(context.Background()); err != nil {
		t.Fatalf("second Stop after the job returned: %v", err)
	}
}

func TestChainAfterSuccess(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	fail := atomic.Bool{}
	ingest := Job{Name: "ingest", Spec: yearly, Run: func(context.Context) (string, error) {
		if fail.Load() {
			return "", errors.New("sftp down")
		}
		return "1 file", nil
	}}
	s := newStarted(t, []Job{ingest, okJob("submit", yearly)}, Options{Logger: logs.logger()})
	if err := s.Chain("ingest", "nope"); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("Chain to an unknown job = %v, want ErrUnknownJob", err)
	}
	if err := s.Chain("ingest", "submit"); err != nil {
		t.Fatal(err)
	}
	if err := s.Trigger("ingest"); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "submit", "cause": "chain", "outcome": "ok"})

	fail.Store(true)
	if err := s.Trigger("ingest"); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "ingest", "outcome": "failed"})
	// Only the first, successful ingest started a submit. A chained run
	// would be launched before the failed run's goroutine ends, so once
	// every run has ended, any such submit has finished too.
	s.wg.Wait()
	if n := len(logs.matching("job finished", map[string]string{"job": "submit"})); n != 1 {
		t.Errorf("submit ran %d times, want 1 (no chain after a failed ingest)", n)
	}
}

func TestRequestRunWhileTargetRunsRunsItAgain(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	g := newGate()
	asked := make(chan bool, 1)
	ingest := Job{Name: "ingest", Spec: yearly, Run: func(ctx context.Context) (string, error) {
		asked <- RequestRun(ctx, "submit")
		return "2 pending rows", nil
	}}
	s := newStarted(t, []Job{ingest, {Name: "submit", Spec: yearly, Run: g.run}}, Options{Logger: logs.logger()})
	if RequestRun(context.Background(), "submit") {
		t.Error("RequestRun outside a scheduler run returned true")
	}
	if err := s.Trigger("submit"); err != nil {
		t.Fatal(err)
	}
	g.waitStart(t)
	if err := s.Trigger("ingest"); err != nil {
		t.Fatal(err)
	}
	if !recv(t, asked, "RequestRun") {
		t.Fatal("RequestRun inside a run returned false")
	}
	logs.waitFor(t, 1, "job requested while running; it will run again when this run ends", map[string]string{"job": "submit", "requested_by": "ingest"})
	g.release <- struct{}{} // the first submit ends; the request starts another at once
	g.waitStart(t)
	g.release <- struct{}{}
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "submit", "cause": "chain"})
}

func jobHealth(t *testing.T, s *Scheduler, name string) JobHealth {
	t.Helper()
	for _, j := range s.Health().Jobs {
		if j.Name == name {
			return j
		}
	}
	t.Fatalf("no job %q in health", name)
	return JobHealth{}
}
