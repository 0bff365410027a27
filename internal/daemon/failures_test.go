package daemon

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/metrics"
	"github.com/batchd/batchd/internal/payment"
)

// TestFailuresCountedBySource checks batchd_job_failures_total{job,source}:
// every failed or panicked run counts once under payment.SourceOf's source,
// a success or an interrupted run counts nothing, and every job's series
// read 0 from the start (and from a Reload that adds a job), so that an
// alert on their increase sees the first failure.
func TestFailuresCountedBySource(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	m := metrics.New()
	results := []error{
		fmt.Errorf("commit: %w", payment.ErrLedger),
		fmt.Errorf("list inbox: %w", payment.ErrRemote),
		fmt.Errorf("create: %w", payment.ErrKeyRefused),
		errors.New("something of batchd's own"),
		nil, // ok
		nil, // panics, below
	}
	var n atomic.Int32
	run := func(context.Context) (string, error) {
		i := int(n.Add(1)) - 1
		if i == len(results)-1 {
			panic("boom")
		}
		return "", results[i]
	}
	idle := func(context.Context) (string, error) { return "", nil }
	s := newStarted(t, []Job{{Name: "ingest", Spec: yearly, Run: run}, {Name: "reconcile", Spec: yearly, Run: idle}},
		Options{Logger: logs.logger(), Metrics: m})

	for _, src := range []string{"sftp", "api", "ledger", "batchd"} {
		for _, job := range []string{"ingest", "reconcile"} {
			if v := gather(t, m, "batchd_job_failures_total", map[string]string{"job": job, "source": src}); v != 0 {
				t.Errorf("before any run: failures{job=%s,source=%s} = %v, want 0", job, src, v)
			}
		}
	}
	for i := range results {
		// The run logs its line just before it is marked finished.
		deadline := time.Now().Add(waitLimit)
		err := s.Trigger("ingest")
		for errors.Is(err, ErrRunning) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
			err = s.Trigger("ingest")
		}
		if err != nil {
			t.Fatalf("Trigger %d: %v", i, err)
		}
		logs.waitFor(t, i+1, "job finished", map[string]string{"job": "ingest"})
	}
	for src, want := range map[string]float64{"ledger": 1, "sftp": 1, "api": 1, "batchd": 2} {
		if v := gather(t, m, "batchd_job_failures_total", map[string]string{"job": "ingest", "source": src}); v != want {
			t.Errorf("failures{job=ingest,source=%s} = %v, want %v", src, v, want)
		}
	}
	if v := gather(t, m, "batchd_job_runs_total", map[string]string{"job": "ingest", "outcome": "ok"}); v != 1 {
		t.Errorf("ok runs = %v, want 1", v)
	}

	if err := s.Reload([]Job{{Name: "ingest", Spec: yearly, Run: idle}, {Name: "backup", Spec: yearly, Run: idle}}); err != nil {
		t.Fatal(err)
	}
	if v := gather(t, m, "batchd_job_failures_total", map[string]string{"job": "backup", "source": "ledger"}); v != 0 {
		t.Errorf("failures{job=backup,source=ledger} after Reload = %v, want 0", v)
	}
}

// TestCanceledRunIsNoFailure checks that a run interrupted by the stop is
// not counted as a failure, unless its error is the ledger's.
func TestCanceledRunIsNoFailure(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	m := metrics.New()
	started := make(chan struct{})
	run := func(ctx context.Context) (string, error) {
		close(started)
		<-ctx.Done()
		return "", context.Cause(ctx)
	}
	s := newStarted(t, []Job{{Name: "submit", Spec: yearly, Run: run}}, Options{Logger: logs.logger(), Metrics: m})
	if err := s.Trigger("submit"); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "submit", "outcome": "canceled"})
	for _, src := range []string{"sftp", "api", "ledger", "batchd"} {
		if v := gather(t, m, "batchd_job_failures_total", map[string]string{"job": "submit", "source": src}); v != 0 {
			t.Errorf("failures{source=%s} after a canceled run = %v, want 0", src, v)
		}
	}
}
