package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// errIncomplete stands for submit.ErrIncomplete: the run ended with work
// left undone.
var errIncomplete = errors.New("submit left work undone")

func TestOutcomeOf(t *testing.T) {
	t.Parallel()
	live := context.Background()
	stopped, cancel := context.WithCancelCause(context.Background())
	cancel(ErrStopping)
	ledger := &payment.LedgerError{Op: "write", Path: "/x/batchd.db", Err: errors.New("no space left on device")}
	tests := []struct {
		name string
		ctx  context.Context
		res  result
		want Outcome
	}{
		{"nil error", live, result{}, OutcomeOK},
		{"error", live, result{err: fmt.Errorf("create check: %w", apiError{503})}, OutcomeFailed},
		{"work left undone", live, result{err: fmt.Errorf("%w: 3 rows left pending", errIncomplete)}, OutcomeFailed},
		{"ledger failure", live, result{err: ledger}, OutcomeFailed},
		{"panic", live, result{panic: "boom", err: errors.New("panic: boom")}, OutcomePanic},
		{"interrupted, nil error", stopped, result{}, OutcomeCanceled},
		{"interrupted, its cancellation", stopped, result{err: context.Canceled}, OutcomeCanceled},
		{"interrupted, work left undone", stopped, result{err: errIncomplete}, OutcomeCanceled},
		{"interrupted, ledger failure", stopped, result{err: fmt.Errorf("send row: %w", ledger)}, OutcomeFailed},
		{"interrupted, panic", stopped, result{panic: "boom", err: errors.New("panic: boom")}, OutcomePanic},
	}
	for _, tt := range tests {
		if got := outcomeOf(tt.ctx, tt.res); got != tt.want {
			t.Errorf("%s: outcome %q, want %q", tt.name, got, tt.want)
		}
	}
	for o, failing := range map[Outcome]bool{OutcomeOK: false, OutcomeCanceled: false, OutcomeFailed: true, OutcomePanic: true} {
		if o.failing() != failing {
			t.Errorf("%s.failing() = %v", o, !failing)
		}
	}
}

// TestFailedRunStaysFailingUntilSuccess: a run that returns an error (work
// left undone) is failed, never recorded as a success, and keeps the job
// failing through an interrupted run until the job next succeeds.
func TestFailedRunStaysFailingUntilSuccess(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	var mode atomic.Int32 // 0 fail, 1 succeed
	job := Job{Name: "submit", Spec: yearly, Run: func(context.Context) (string, error) {
		if mode.Load() == 0 {
			return "created 0", fmt.Errorf("%w: 3 rows left pending", errIncomplete)
		}
		return "created 3", nil
	}}
	var successes atomic.Int32
	s := newStarted(t, []Job{job}, Options{Logger: logs.logger(),
		RecordSuccess: func(string, time.Time) error { successes.Add(1); return nil }})
	for i := 1; i <= 2; i++ {
		if err := s.Trigger("submit"); err != nil {
			t.Fatal(err)
		}
		logs.waitFor(t, i, "job finished", map[string]string{"job": "submit", "outcome": "failed", "source": "batchd"})
		s.wg.Wait()
	}
	h := s.Health()
	if len(h.Failures) != 1 || h.Failures[0].Job != "submit" || !strings.Contains(h.Failures[0].Error, "work undone") ||
		h.Failures[0].Since.After(h.Failures[0].At) || h.Failures[0].Since.Equal(time.Time{}) {
		t.Fatalf("failures = %+v", h.Failures)
	}
	if successes.Load() != 0 {
		t.Fatal("a failed run was recorded as a success")
	}
	mode.Store(1)
	if err := s.Trigger("submit"); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "submit", "outcome": "ok"})
	s.wg.Wait()
	if h := s.Health(); len(h.Failures) != 0 || h.Jobs[0].Failing != nil || successes.Load() != 1 {
		t.Fatalf("after a success: failures %+v, %d successes recorded", h.Failures, successes.Load())
	}
}

// TestInterruptedRunIsNotASuccess: a run that returns nil after batchd
// began to stop may have left work undone; it is not recorded as a
// success, and a job failing before stays failing.
func TestInterruptedRunIsNotASuccess(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	var fail atomic.Bool
	fail.Store(true)
	started := make(chan struct{}, 1)
	job := Job{Name: "ingest", Spec: yearly, Run: func(ctx context.Context) (string, error) {
		if fail.Load() {
			return "", fmt.Errorf("list inbox: %w", payment.ErrRemote)
		}
		started <- struct{}{}
		<-ctx.Done()
		return "1 of 2 files", nil // stopped early, says nothing
	}}
	var successes atomic.Int32
	s := newStarted(t, []Job{job}, Options{Logger: logs.logger(),
		RecordSuccess: func(string, time.Time) error { successes.Add(1); return nil }})
	if err := s.Trigger("ingest"); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "ingest", "outcome": "failed", "source": "sftp"})
	s.wg.Wait()
	fail.Store(false)
	if err := s.Trigger("ingest"); err != nil {
		t.Fatal(err)
	}
	recv(t, started, "the second run")
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	line := logs.waitFor(t, 1, "job finished", map[string]string{"job": "ingest", "outcome": "canceled"})[0]
	if line.attrs["error"] != "interrupted: batchd is stopping" {
		t.Errorf("interrupted run's line = %v", line)
	}
	h := s.Health()
	if successes.Load() != 0 || !h.Jobs[0].LastSuccess.IsZero() {
		t.Error("an interrupted run was recorded as a success")
	}
	if len(h.Failures) != 1 || h.Failures[0].Source != "sftp" {
		t.Errorf("failures after an interrupted run = %+v, want the earlier sftp failure", h.Failures)
	}
}

// fakeLedger stands for the ledger: it records every use after Close as a
// violation.
type fakeLedger struct {
	mu         sync.Mutex
	closed     bool
	closes     int
	violations []string
	events     []string
}

func (l *fakeLedger) touch(who string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		l.violations = append(l.violations, who+" used the ledger after Close")
	}
}

func (l *fakeLedger) event(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *fakeLedger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.closes++
	l.events = append(l.events, "ledger closed")
	return nil
}

func (l *fakeLedger) report() (closes int, violations, events []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closes, append([]string(nil), l.violations...), append([]string(nil), l.events...)
}

// TestShutdownClosesTheLedgerLast: Shutdown stops scheduling, gives up
// draining at its deadline, stops the admin server, and still closes the
// ledger only after every job goroutine and every admin request in
// progress has returned. Each of them uses the ledger as it returns; none
// may find it closed.
func TestShutdownClosesTheLedgerLast(t *testing.T) {
	t.Parallel()
	logs := newLogSink()
	led := &fakeLedger{}
	// stubborn finishes its in-flight work after the drain deadline.
	stubbornIn, stubbornOut := make(chan struct{}, 1), make(chan struct{})
	stubborn := Job{Name: "submit", Spec: yearly, Run: func(ctx context.Context) (string, error) {
		stubbornIn <- struct{}{}
		<-ctx.Done()
		<-stubbornOut
		led.touch("submit")
		led.event("submit returned")
		return "2 sent", fmt.Errorf("%w: 1 row left pending", errIncomplete)
	}}
	politeIn := make(chan struct{}, 1)
	polite := Job{Name: "reconcile", Spec: yearly, Run: func(ctx context.Context) (string, error) {
		politeIn <- struct{}{}
		<-ctx.Done()
		led.touch("reconcile")
		led.event("reconcile returned")
		return "", ctx.Err()
	}}
	s, err := New([]Job{stubborn, polite}, Options{Logger: logs.logger(),
		RecordSuccess: func(job string, _ time.Time) error { led.touch("record " + job); return nil },
		StatusNote:    func() string { led.touch("status note"); return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	s.groupGrace = waitLimit
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	slowIn, slowOut := make(chan struct{}, 1), make(chan struct{})
	admin := s.AdminHandler(AdminOptions{Check: func() error { led.touch("/healthz"); return nil }})
	mux := http.NewServeMux()
	mux.Handle("/", admin)
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) { // a scrape in progress
		slowIn <- struct{}{}
		<-slowOut
		led.touch("admin request")
		led.event("admin request returned")
	})
	s.ServeAdmin(ln, mux)
	s.StartWatchdog()
	base := "http://" + ln.Addr().String()
	if resp, err := http.Get(base + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz before shutdown: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	for _, name := range []string{"submit", "reconcile"} {
		if err := s.Trigger(name); err != nil {
			t.Fatal(err)
		}
	}
	recv(t, stubbornIn, "submit to start")
	recv(t, politeIn, "reconcile to start")
	go func() {
		if resp, err := http.Get(base + "/slow"); err == nil {
			resp.Body.Close()
		}
	}()
	recv(t, slowIn, "the slow admin request")

	expired, cancel := context.WithCancel(context.Background())
	cancel() // the shutdown timeout has passed: Stop gives up draining at once
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(expired, led.Close) }()
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "reconcile", "outcome": "canceled"})
	if err := s.Trigger("submit"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Trigger during shutdown = %v, want ErrNotRunning", err)
	}
	close(stubbornOut) // the stubborn job returns long after the drain deadline
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "submit"})
	close(slowOut) // and the admin request after it
	err = recv(t, done, "Shutdown")
	if err == nil || !strings.Contains(err.Error(), "still running [") || !strings.Contains(err.Error(), "submit") {
		t.Errorf("Shutdown = %v, want the drain's deadline error naming submit", err)
	}
	closes, violations, events := led.report()
	if closes != 1 || len(violations) > 0 {
		t.Fatalf("ledger closed %d times; violations: %q; events %q", closes, violations, events)
	}
	if events[len(events)-1] != "ledger closed" || len(events) != 4 {
		t.Errorf("events %q: want every job and the admin request to return before the ledger closes", events)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("the admin server still accepts connections after Shutdown")
	}
	if line := logs.matching("job finished", map[string]string{"job": "submit"})[0]; line.attrs["outcome"] != "canceled" {
		t.Errorf("the interrupted submit's outcome = %v", line)
	}
}

// TestShutdownLeavesTheLedgerOpenWhileAJobRuns: a job that does not
// return even after the grace period keeps the ledger open; Shutdown
// returns an error rather than close it under the job.
func TestShutdownLeavesTheLedgerOpenWhileAJobRuns(t *testing.T) {
	t.Parallel()
	led := &fakeLedger{}
	g := newGate()
	s, err := New([]Job{{Name: "reconcile", Spec: yearly, Run: g.run}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.groupGrace = 20 * time.Millisecond // the deadline itself is what is tested
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Trigger("reconcile"); err != nil {
		t.Fatal(err)
	}
	g.waitStart(t)
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	err = s.Shutdown(expired, led.Close)
	if err == nil || !strings.Contains(err.Error(), "the ledger was not closed") {
		t.Errorf("Shutdown with a job still running = %v", err)
	}
	if closes, _, _ := led.report(); closes != 0 {
		t.Error("the ledger was closed while a job was running")
	}
	close(g.release)
	s.wg.Wait()
}

// TestShutdownWithoutRuns closes the ledger after the admin server and
// the watchdog stopped, and returns nil.
func TestShutdownWithoutRuns(t *testing.T) {
	t.Parallel()
	led := &fakeLedger{}
	s := newStarted(t, []Job{okJob("ingest", yearly)}, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.ServeAdmin(ln, s.AdminHandler(AdminOptions{}))
	s.StartWatchdog()
	if err := s.Shutdown(context.Background(), led.Close); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if closes, _, _ := led.report(); closes != 1 {
		t.Fatalf("ledger closed %d times", closes)
	}
	if s.Err() != nil {
		t.Errorf("Err after a clean shutdown = %v", s.Err())
	}
}

// TestAdminFailureFailsTheGroup: the admin server dying is reported
// through Failed and Err, so that the run command stops.
func TestAdminFailureFailsTheGroup(t *testing.T) {
	t.Parallel()
	s := newStarted(t, []Job{okJob("ingest", yearly)}, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // serving fails at once
	s.ServeAdmin(ln, s.AdminHandler(AdminOptions{}))
	select {
	case <-s.Failed():
	case <-time.After(waitLimit):
		t.Fatal("Failed not closed after the admin server failed")
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "admin serve") {
		t.Errorf("Err = %v, want the admin server's failure", err)
	}
	led := &fakeLedger{}
	if err := s.Shutdown(context.Background(), led.Close); err == nil || !strings.Contains(err.Error(), "admin serve") {
		t.Errorf("Shutdown = %v, want it to report the admin failure", err)
	}
	if closes, _, _ := led.report(); closes != 1 {
		t.Errorf("ledger closed %d times after a clean drain", closes)
	}
}
