package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/metrics"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/state/kv"
)

// testTTL is long enough that the leader loop's own ticker never fires in
// a test: each test drives the election by calling leadOnce itself.
const testTTL = time.Hour

// t0 is the test clock's start; any date does.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// fakeLease is a state.Leadership whose answers the test sets. It
// records every call, with TakeOver and job runs, in one ordered list.
type fakeLease struct {
	mu     sync.Mutex
	answer state.LeaderInfo
	err    error
	events []string
	doubt  int
	// rewind, when set, is what the next TakeOver reports (and clears):
	// the ledger's database went back in time.
	rewind *state.Rewind
	// during, when set, runs inside TakeOver (the lease changing hands
	// while the ledger is readied).
	during func(*fakeLease)
}

var _ state.Leadership = (*fakeLease)(nil)

func (f *fakeLease) set(info state.LeaderInfo, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answer, f.err = info, err
}

func (f *fakeLease) note(e string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, e)
}

func (f *fakeLease) Lead(context.Context, time.Duration) (state.LeaderInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, "lead")
	return f.answer, f.err
}

func (f *fakeLease) Leader(context.Context) (state.LeaderInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, "leader")
	return f.answer, f.err
}

func (f *fakeLease) Resign(context.Context) error {
	f.note("resign")
	return nil
}

func (f *fakeLease) takeOver() (state.TakeOverReport, error) {
	f.note("takeover")
	f.mu.Lock()
	during := f.during
	f.mu.Unlock()
	if during != nil {
		during(f)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	rw := f.rewind
	f.rewind = nil
	return state.TakeOverReport{InDoubt: f.doubt, Rewind: rw}, nil
}

// count returns how many events equal e.
func (f *fakeLease) count(e string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, got := range f.events {
		if got == e {
			n++
		}
	}
	return n
}

func (f *fakeLease) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.events...)
}

func other(epoch uint64) state.LeaderInfo {
	return state.LeaderInfo{Holder: "b.example:42", Epoch: epoch, Expires: t0.Add(15 * time.Second)}
}

func self(epoch uint64) state.LeaderInfo {
	return state.LeaderInfo{Holder: "a.example:7", Epoch: epoch, Expires: t0.Add(15 * time.Second), Self: true}
}

// electedHarness is a scheduler with a fake lease and a test clock.
type electedHarness struct {
	s     *Scheduler
	lease *fakeLease
	clock *clocktest.Clock
	logs  *logSink
	m     *metrics.Metrics
}

// newElected starts a scheduler whose lease first answers first.
func newElected(t *testing.T, jobs []Job, first state.LeaderInfo, lastSuccess func(string) (time.Time, bool)) *electedHarness {
	t.Helper()
	h := &electedHarness{lease: &fakeLease{answer: first, doubt: 7}, clock: clocktest.New(t0), logs: newLogSink(), m: metrics.New()}
	h.s = newStarted(t, jobs, Options{Logger: h.logs.logger(), Metrics: h.m, Now: h.clock.Now,
		Leadership: h.lease, TakeOver: h.lease.takeOver, LeaseTTL: testTTL, LastSuccess: lastSuccess})
	return h
}

func (h *electedHarness) lead() { h.s.leadOnce(context.Background()) }

func (h *electedHarness) metric(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	return gather(t, h.m, name, labels)
}

// healthz serves GET /healthz and decodes it.
func (h *electedHarness) healthz(t *testing.T) (int, healthzBody) {
	t.Helper()
	code, body := do(t, h.s.AdminHandler(AdminOptions{}), "GET", "/healthz", nil)
	var b healthzBody
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatalf("healthz body %q: %v", body, err)
	}
	return code, b
}

// recordingJob notes each run in the lease's event list and returns at
// once.
func recordingJob(name string, f *fakeLease) Job {
	return Job{Name: name, Spec: yearly, Run: func(context.Context) (string, error) {
		f.note("run:" + name)
		return "done", nil
	}}
}

// TestLeaderSeriesExistFromStart: the three leader series read 0 before
// anything happened.
func TestLeaderSeriesExistFromStart(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	for _, name := range []string{"batchd_leader", "batchd_leader_epoch", "batchd_leader_changes_total"} {
		if v := gather(t, m, name, nil); v != 0 {
			t.Errorf("%s = %v at start, want 0", name, v)
		}
	}
}

// TestStandbyRunsNoJob: while another instance leads, no job runs, by
// schedule, trigger or catch-up; each skipped tick is counted with
// reason "standby"; the role is logged once, not per tick; /healthz is
// 200 and names the leader.
func TestStandbyRunsNoJob(t *testing.T) {
	t.Parallel()
	missed := func(string) (time.Time, bool) { return t0.Add(-48 * time.Hour), true }
	var h *electedHarness
	lease := &fakeLease{}
	jobs := []Job{{Name: "ingest", Spec: yearly, Run: func(context.Context) (string, error) {
		lease.note("run:ingest")
		return "", nil
	}}}
	h = &electedHarness{lease: lease, clock: clocktest.New(t0), logs: newLogSink(), m: metrics.New()}
	lease.answer = other(3)
	h.s = newStarted(t, jobs, Options{Logger: h.logs.logger(), Metrics: h.m, Now: h.clock.Now,
		Leadership: lease, TakeOver: lease.takeOver, LeaseTTL: testTTL, LastSuccess: missed})

	for range 3 {
		h.s.tick("ingest").Run()
		h.lead()
	}
	if err := h.s.Trigger("ingest"); !errors.Is(err, ErrStandby) {
		t.Errorf("Trigger on a standby = %v, want ErrStandby", err)
	}
	if n := lease.count("run:ingest"); n != 0 {
		t.Errorf("a standby ran ingest %d times (events %v)", n, lease.list())
	}
	if n := lease.count("takeover"); n != 0 {
		t.Errorf("a standby took over %d times", n)
	}
	if v := h.metric(t, "batchd_job_skipped_total", map[string]string{"job": "ingest", "reason": "standby"}); v != 3 {
		t.Errorf("standby skips = %v, want 3 (one per tick)", v)
	}
	if v := h.metric(t, "batchd_job_skipped_total", map[string]string{"job": "ingest", "reason": "running"}); v != 0 {
		t.Errorf("running skips = %v, want 0", v)
	}
	if n := len(h.logs.matching("standby: another instance leads; scheduled jobs run there, not here", nil)); n != 1 {
		t.Errorf("%d standby lines after 4 answers, want 1:\n%s", n, h.logs.dump())
	}
	code, b := h.healthz(t)
	want := "standby; b.example:42 leads (epoch 3, lease until 2026-03-02T09:00:15Z)"
	if code != http.StatusOK || roleOf(b) != want || b.Role.Leading {
		t.Errorf("healthz = %d role %q, want 200 %q", code, roleOf(b), want)
	}
	if v := h.metric(t, "batchd_leader", nil); v != 0 {
		t.Errorf("batchd_leader = %v on a standby", v)
	}
	if line := h.s.statusLine(); !strings.HasPrefix(line, want+"; ingest") {
		t.Errorf("status line %q: want it to start with the role", line)
	}
	if v := h.metric(t, "batchd_leader_epoch", nil); v != 3 {
		t.Errorf("batchd_leader_epoch = %v, want 3", v)
	}
	// A change of leader is logged again, and counted.
	lease.set(state.LeaderInfo{Holder: "c.example:9", Epoch: 4, Expires: t0.Add(time.Minute)}, nil)
	h.lead()
	if n := len(h.logs.matching("standby: another instance leads; scheduled jobs run there, not here", map[string]string{"leader": "c.example:9"})); n != 1 {
		t.Errorf("no standby line for the new leader:\n%s", h.logs.dump())
	}
	if v := h.metric(t, "batchd_leader_changes_total", nil); v != 1 {
		t.Errorf("batchd_leader_changes_total = %v after one failover seen, want 1", v)
	}
}

// TestBecomingLeaderTakesOverBeforeAnyJob: when the lease comes to this
// instance, TakeOver runs once, before the catch-up run; the log says so
// in one line; renewals take over no more.
func TestBecomingLeaderTakesOverBeforeAnyJob(t *testing.T) {
	t.Parallel()
	missed := func(string) (time.Time, bool) { return t0.Add(-48 * time.Hour), true }
	lease := &fakeLease{answer: other(3), doubt: 7}
	logs := newLogSink()
	m := metrics.New()
	clock := clocktest.New(t0)
	done := make(chan struct{}, 4)
	job := Job{Name: "reconcile", Spec: "0 6 * * *", Run: func(context.Context) (string, error) {
		lease.note("run:reconcile")
		done <- struct{}{}
		return "", nil
	}}
	s := newStarted(t, []Job{job}, Options{Logger: logs.logger(), Metrics: m, Now: clock.Now,
		Leadership: lease, TakeOver: lease.takeOver, LeaseTTL: testTTL, LastSuccess: missed})
	h := &electedHarness{s: s, lease: lease, clock: clock, logs: logs, m: m}

	lease.set(self(4), nil)
	h.lead()
	recv(t, done, "the catch-up run")
	settled(t, s, "reconcile")
	h.lead()
	h.lead()
	ev := lease.list()
	ti, ri := indexOf(ev, "takeover"), indexOf(ev, "run:reconcile")
	if lease.count("takeover") != 1 || ti < 0 || ri < ti {
		t.Errorf("events %v: want one takeover, before the first run", ev)
	}
	line := "took over as leader (epoch 4; previous holder b.example:42; 7 rows put in doubt)"
	if n := len(logs.matching(line, nil)); n != 1 {
		t.Errorf("%d lines %q, want 1:\n%s", n, line, logs.dump())
	}
	if n := len(logs.matching("catching up a missed run", map[string]string{"job": "reconcile"})); n != 1 {
		t.Errorf("%d catch-up lines, want 1:\n%s", n, logs.dump())
	}
	for name, want := range map[string]float64{"batchd_leader": 1, "batchd_leader_epoch": 4, "batchd_leader_changes_total": 1} {
		if v := h.metric(t, name, nil); v != want {
			t.Errorf("%s = %v, want %v", name, v, want)
		}
	}
	code, b := h.healthz(t)
	if code != http.StatusOK || roleOf(b) != "leader (epoch 4)" {
		t.Errorf("healthz = %d role %q, want 200 \"leader (epoch 4)\"", code, roleOf(b))
	}
}

// TestFileLedgerLeadsAsToday: a ledger that always answers "this
// instance, epoch 1" (bbolt) leads from Start: catch-up at Start as
// without election, no change of leader counted, and its term logged at
// debug only (a single host has no leader to tell of).
func TestFileLedgerLeadsAsToday(t *testing.T) {
	t.Parallel()
	missed := func(string) (time.Time, bool) { return t0.Add(-48 * time.Hour), true }
	lease := &fakeLease{answer: self(1)}
	done := make(chan struct{}, 1)
	job := Job{Name: "reconcile", Spec: "0 6 * * *", Run: func(context.Context) (string, error) {
		lease.note("run:reconcile")
		done <- struct{}{}
		return "", nil
	}}
	logs, m := newLogSink(), metrics.New()
	newStarted(t, []Job{job}, Options{Logger: logs.logger(), Metrics: m, Now: clocktest.New(t0).Now,
		Leadership: lease, TakeOver: lease.takeOver, LeaseTTL: testTTL, LastSuccess: missed})
	recv(t, done, "the catch-up run at Start")
	if ev := lease.list(); indexOf(ev, "takeover") < 0 || indexOf(ev, "takeover") > indexOf(ev, "run:reconcile") {
		t.Errorf("events %v: want the takeover first", ev)
	}
	rec := logs.waitFor(t, 1, "took over as leader (epoch 1; previous holder none; 0 rows put in doubt)", nil)
	if rec[0].level != slog.LevelDebug {
		t.Errorf("a file ledger's term logged at %s, want DEBUG", rec[0].level)
	}
	if v := gather(t, m, "batchd_leader_changes_total", nil); v != 0 {
		t.Errorf("batchd_leader_changes_total = %v for a file ledger's one term, want 0", v)
	}
	if v := gather(t, m, "batchd_leader", nil); v != 1 {
		t.Errorf("batchd_leader = %v, want 1", v)
	}
}

// TestSharedLedgerTermLoggedAtInfo: on a ledger several instances share,
// taking over is logged at info even with no row put in doubt.
func TestSharedLedgerTermLoggedAtInfo(t *testing.T) {
	t.Parallel()
	shared := self(2)
	shared.Shared = true
	lease := &fakeLease{answer: shared}
	logs := newLogSink()
	newStarted(t, []Job{{Name: "submit", Spec: yearly, Run: func(context.Context) (string, error) { return "", nil }}},
		Options{Logger: logs.logger(), Metrics: metrics.New(), Now: clocktest.New(t0).Now,
			Leadership: lease, TakeOver: lease.takeOver, LeaseTTL: testTTL})
	rec := logs.waitFor(t, 1, "took over as leader (epoch 2; previous holder none; 0 rows put in doubt)", nil)
	if rec[0].level != slog.LevelInfo {
		t.Errorf("a shared ledger's term logged at %s, want INFO", rec[0].level)
	}
}

// TestLosingTheLeaseCancelsRunningJobs: when Lead names another holder,
// the running job's ctx is cancelled at once (cause ErrLostLeadership),
// the run is recorded interrupted, and nothing more starts.
func TestLosingTheLeaseCancelsRunningJobs(t *testing.T) {
	t.Parallel()
	ctxs := make(chan context.Context, 1)
	job := Job{Name: "submit", Spec: yearly, Run: func(ctx context.Context) (string, error) {
		ctxs <- ctx
		<-ctx.Done()
		return "stopped", ctx.Err()
	}}
	h := newElected(t, []Job{job}, self(2), nil)
	if err := h.s.Trigger("submit"); err != nil {
		t.Fatal(err)
	}
	ctx := recv(t, ctxs, "the run to start")
	h.lease.set(other(3), nil)
	h.lead()
	select {
	case <-ctx.Done():
	case <-time.After(waitLimit):
		t.Fatal("the run's ctx was not cancelled when the lease was lost")
	}
	if !errors.Is(context.Cause(ctx), ErrLostLeadership) {
		t.Errorf("cause = %v, want ErrLostLeadership", context.Cause(ctx))
	}
	fin := h.logs.waitFor(t, 1, "job finished", map[string]string{"job": "submit"})[0]
	if fin.attrs["outcome"] != string(OutcomeCanceled) || !strings.Contains(fin.attrs["error"], "b.example:42 holds the lease now") {
		t.Errorf("finish line %v: want canceled, naming the new holder", fin)
	}
	h.logs.waitFor(t, 1, "lost leadership: standby now; running jobs cancelled", nil)
	if err := h.s.Trigger("submit"); !errors.Is(err, ErrStandby) {
		t.Errorf("Trigger after losing the lease = %v, want ErrStandby", err)
	}
	for name, want := range map[string]float64{"batchd_leader": 0, "batchd_leader_epoch": 3, "batchd_leader_changes_total": 1} {
		if v := h.metric(t, name, nil); v != want {
			t.Errorf("%s = %v, want %v", name, v, want)
		}
	}
}

// TestLeaseRunsOutWhenLeadFails: a leader whose renewals fail stays
// leader for one TTL after its last renewal, then steps down (the lease
// may have run out), cancelling its runs; with no leader seen for twice
// the TTL, /healthz answers 503 with the cause.
func TestLeaseRunsOutWhenLeadFails(t *testing.T) {
	t.Parallel()
	ctxs := make(chan context.Context, 1)
	job := Job{Name: "submit", Spec: yearly, Run: func(ctx context.Context) (string, error) {
		ctxs <- ctx
		<-ctx.Done()
		return "", ctx.Err()
	}}
	h := newElected(t, []Job{job}, self(2), nil)
	if err := h.s.Trigger("submit"); err != nil {
		t.Fatal(err)
	}
	ctx := recv(t, ctxs, "the run to start")
	h.lease.set(state.LeaderInfo{}, errors.New("dial tcp 10.0.0.5:5432: connection refused"))
	h.clock.Advance(testTTL / 2)
	h.lead()
	if ctx.Err() != nil {
		t.Fatal("a leader stepped down before its lease could have run out")
	}
	if code, b := h.healthz(t); code != http.StatusOK || roleOf(b) != "leader (epoch 2)" {
		t.Errorf("healthz while renewals fail within the TTL = %d %q", code, roleOf(b))
	}
	h.clock.Advance(testTTL/2 + time.Second)
	h.lead()
	if ctx.Err() == nil || !errors.Is(context.Cause(ctx), ErrLostLeadership) {
		t.Fatalf("run ctx not cancelled for a lease that may have run out: %v", context.Cause(ctx))
	}
	h.logs.waitFor(t, 1, "lost leadership: standby now; running jobs cancelled", nil)
	if code, b := h.healthz(t); code != http.StatusOK {
		t.Errorf("healthz one TTL after the last renewal = %d (%q), want 200: no leader for 2×TTL yet", code, roleOf(b))
	}
	h.clock.Advance(testTTL)
	h.lead()
	code, b := h.healthz(t)
	if code != http.StatusServiceUnavailable || roleOf(b) != "no leader" {
		t.Fatalf("healthz 2×TTL after the last renewal = %d role %q, want 503 \"no leader\"", code, roleOf(b))
	}
	f := failureOf(b.Failures, "leader")
	if f == nil || !strings.Contains(f.Error, "no leader for 2h0m1s") || !strings.Contains(f.Error, "connection refused") {
		t.Errorf("failures %+v: want a \"leader\" failure with how long and the cause", b.Failures)
	}
	if n := len(h.logs.matching("leader lease: the ledger did not answer; trying again every lease_ttl/3", nil)); n != 1 {
		t.Errorf("%d lines for one streak of failures, want 1", n)
	}
	// Another instance took over meanwhile: a standby is healthy.
	h.lease.set(other(3), nil)
	h.lead()
	if code, b := h.healthz(t); code != http.StatusOK || !strings.HasPrefix(roleOf(b), "standby; b.example:42 leads (epoch 3") {
		t.Errorf("healthz once another leads = %d %q", code, roleOf(b))
	}
}

// TestNoLeaderAtAll: an instance that never reads the lease is unhealthy
// after twice the TTL, naming the cause.
func TestNoLeaderAtAll(t *testing.T) {
	t.Parallel()
	h := newElected(t, []Job{okJob("ingest", yearly)}, state.LeaderInfo{}, nil)
	h.lease.set(state.LeaderInfo{}, errors.New("password authentication failed"))
	h.lead()
	if code, _ := h.healthz(t); code != http.StatusOK {
		t.Errorf("healthz at once = %d, want 200 (not 2×TTL yet)", code)
	}
	h.clock.Advance(2*testTTL + time.Second)
	h.lead()
	code, b := h.healthz(t)
	if f := failureOf(b.Failures, "leader"); code != http.StatusServiceUnavailable || f == nil || !strings.Contains(f.Error, "password authentication failed") {
		t.Errorf("healthz = %d %+v, want 503 with the cause", code, b.Failures)
	}
}

// TestFencedRunIsFailedAndStandsDown: a run whose write was fenced is
// failed with source "fenced" (not "ledger": nothing is broken), and the
// instance becomes standby at once; a standby's failed jobs are history,
// not a reason for 503.
func TestFencedRunIsFailedAndStandsDown(t *testing.T) {
	t.Parallel()
	job := Job{Name: "submit", Spec: yearly, Run: func(context.Context) (string, error) {
		return "", fmt.Errorf("record check of row 3: %w", errors.Join(payment.ErrLedger, kv.ErrFenced))
	}}
	h := newElected(t, []Job{job}, self(2), nil)
	if err := h.s.Trigger("submit"); err != nil {
		t.Fatal(err)
	}
	fin := h.logs.waitFor(t, 1, "job finished", map[string]string{"job": "submit"})[0]
	if fin.attrs["outcome"] != string(OutcomeFailed) || fin.attrs["source"] != sourceFenced {
		t.Errorf("finish line %v: want failed with source fenced", fin)
	}
	h.logs.waitFor(t, 1, "lost leadership: standby now; running jobs cancelled", nil)
	if err := h.s.Trigger("submit"); !errors.Is(err, ErrStandby) {
		t.Errorf("Trigger after a fenced write = %v, want ErrStandby", err)
	}
	if v := h.metric(t, "batchd_job_failures_total", map[string]string{"job": "submit", "source": "fenced"}); v != 1 {
		t.Errorf("fenced failures = %v, want 1", v)
	}
	if v := h.metric(t, "batchd_job_failures_total", map[string]string{"job": "submit", "source": "ledger"}); v != 0 {
		t.Errorf("ledger failures = %v, want 0", v)
	}
	h.lease.set(other(3), nil)
	h.lead()
	code, b := h.healthz(t)
	if code != http.StatusOK || len(b.Failures) != 0 {
		t.Errorf("standby healthz = %d failures %+v, want 200 and none", code, b.Failures)
	}
	if v := h.metric(t, "batchd_leader_changes_total", nil); v != 1 {
		t.Errorf("batchd_leader_changes_total = %v, want 1", v)
	}
}

// TestShutdownResigns: a leader gives the lease up on shutdown, after its
// runs have returned, so that a standby takes over at once.
func TestShutdownResigns(t *testing.T) {
	t.Parallel()
	lease := &fakeLease{answer: self(5)}
	s, err := New([]Job{recordingJob("ingest", lease)}, Options{Leadership: lease, LeaseTTL: testTTL, Now: clocktest.New(t0).Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	closed := false
	if err := s.Shutdown(ctx, func() error {
		closed = true
		if lease.count("resign") != 1 {
			t.Error("the ledger was closed before the lease was resigned")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !closed || lease.count("resign") != 1 {
		t.Errorf("events %v: want one resign, then the ledger closed", lease.list())
	}
}

func indexOf(list []string, e string) int {
	for i, got := range list {
		if got == e {
			return i
		}
	}
	return -1
}

func failureOf(fs []Failure, check string) *Failure {
	for i := range fs {
		if fs[i].Check == check {
			return &fs[i]
		}
	}
	return nil
}

// roleOf is /healthz's role line, "" when it has none.
func roleOf(b healthzBody) string {
	if b.Role == nil {
		return ""
	}
	return b.Role.Text
}

// TestLeaseLostDuringTakeOver: when the lease changes hands while
// TakeOver runs (it waited long on the ledger), the term does not start:
// no job runs, and the next renewal tries again.
func TestLeaseLostDuringTakeOver(t *testing.T) {
	t.Parallel()
	h := newElected(t, []Job{recordingJob("ingest", &fakeLease{})}, other(3), nil)
	h.lease.mu.Lock()
	h.lease.during = func(f *fakeLease) {
		f.set(other(5), nil)
		f.during = nil // f.mu is not held here
	}
	h.lease.answer = self(4)
	h.lease.mu.Unlock()
	h.lead()
	if err := h.s.Trigger("ingest"); !errors.Is(err, ErrStandby) {
		t.Errorf("Trigger after a takeover under a lost lease = %v, want ErrStandby", err)
	}
	h.logs.waitFor(t, 1, "leader lease changed while the ledger was readied for this leader; trying again at the next renewal", nil)
	if v := h.metric(t, "batchd_leader", nil); v != 0 {
		t.Errorf("batchd_leader = %v, want 0", v)
	}
	// The next renewal finds the lease free again, and takes over.
	h.lease.set(self(6), nil)
	h.lead()
	h.logs.waitFor(t, 1, "took over as leader (epoch 6; previous holder b.example:42; 7 rows put in doubt)", nil)
	if n := h.lease.count("takeover"); n != 2 {
		t.Errorf("%d takeovers, want 2", n)
	}
}

// TestNewLeaderRunsOnLeadJobs: a standby that takes over runs the
// OnLead jobs at once (the webhook URL's registration, which it was
// refused as a standby), after TakeOver, and only once per term.
func TestNewLeaderRunsOnLeadJobs(t *testing.T) {
	t.Parallel()
	lease := &fakeLease{answer: other(3)}
	done := make(chan struct{}, 4)
	job := Job{Name: "webhook", Spec: yearly, Run: func(context.Context) (string, error) {
		lease.note("run:webhook")
		done <- struct{}{}
		return "", nil
	}}
	s := newStarted(t, []Job{job}, Options{Logger: newLogSink().logger(), Metrics: metrics.New(), Now: clocktest.New(t0).Now,
		Leadership: lease, TakeOver: lease.takeOver, LeaseTTL: testTTL, OnLead: []string{"webhook"}})
	if err := s.Trigger("webhook"); !errors.Is(err, ErrStandby) {
		t.Fatalf("Trigger on a standby = %v, want ErrStandby", err)
	}
	lease.set(self(4), nil)
	s.leadOnce(context.Background())
	recv(t, done, "the webhook run on taking the lead")
	settled(t, s, "webhook")
	s.leadOnce(context.Background()) // a renewal: no new term
	ev := lease.list()
	if lease.count("run:webhook") != 1 || indexOf(ev, "takeover") > indexOf(ev, "run:webhook") {
		t.Errorf("events %v: want the takeover, then one webhook run", ev)
	}
}
