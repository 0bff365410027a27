package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitLimit bounds every wait on a condition; generous, as -race slows
// things down, but far below the test timeout.
const waitLimit = 10 * time.Second

// record is one captured log line.
type record struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

func (r record) String() string { return fmt.Sprintf("%s %q %v", r.level, r.msg, r.attrs) }

// logSink captures log records and wakes waiters on each new one.
type logSink struct {
	mu      sync.Mutex
	recs    []record
	changed chan struct{}
}

func newLogSink() *logSink { return &logSink{changed: make(chan struct{})} }

func (s *logSink) logger() *slog.Logger { return slog.New(sinkHandler{s: s}) }

func (s *logSink) add(r record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, r)
	close(s.changed)
	s.changed = make(chan struct{})
}

// matching returns the records with msg whose attrs include want.
func (s *logSink) matching(msg string, want map[string]string) []record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []record
	for _, r := range s.recs {
		if r.msg == msg && hasAttrs(r, want) {
			out = append(out, r)
		}
	}
	return out
}

func hasAttrs(r record, want map[string]string) bool {
	for k, v := range want {
		if r.attrs[k] != v {
			return false
		}
	}
	return true
}

// waitFor waits until n records match, and returns them.
func (s *logSink) waitFor(t *testing.T, n int, msg string, want map[string]string) []record {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if got := s.matching(msg, want); len(got) >= n {
			return got
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no %d log lines %q with %v; log:\n%s", n, msg, want, s.dump())
		}
	}
}

func (s *logSink) dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, r := range s.recs {
		b.WriteString(r.String() + "\n")
	}
	return b.String()
}

type sinkHandler struct {
	s     *logSink
	attrs []slog.Attr
}

func (h sinkHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h sinkHandler) Handle(_ context.Context, r slog.Record) error {
	rec := record{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	for _, a := range h.attrs {
		rec.attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	h.s.add(rec)
	return nil
}

func (h sinkHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return sinkHandler{s: h.s, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h sinkHandler) WithGroup(string) slog.Handler { return h }

// fakeNotifier records sd_notify messages in order.
type fakeNotifier struct {
	mu      sync.Mutex
	events  []string
	changed chan struct{}
}

func newFakeNotifier() *fakeNotifier { return &fakeNotifier{changed: make(chan struct{})} }

func (n *fakeNotifier) add(e string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.events = append(n.events, e)
	close(n.changed)
	n.changed = make(chan struct{})
}

func (n *fakeNotifier) Ready()             { n.add("READY=1") }
func (n *fakeNotifier) Stopping()          { n.add("STOPPING=1") }
func (n *fakeNotifier) Status(line string) { n.add("STATUS=" + line) }
func (n *fakeNotifier) Watchdog()          { n.add("WATCHDOG=1") }

func (n *fakeNotifier) snapshot() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.events...)
}

// waitCount waits until at least k events equal e.
func (n *fakeNotifier) waitCount(t *testing.T, e string, k int) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		n.mu.Lock()
		ch := n.changed
		c := 0
		for _, got := range n.events {
			if got == e {
				c++
			}
		}
		n.mu.Unlock()
		if c >= k {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("fewer than %d %q; events: %q", k, e, n.snapshot())
		}
	}
}

// gate is a job body that signals each start and blocks until released.
type gate struct {
	started chan context.Context
	release chan struct{}
}

func newGate() *gate {
	return &gate{started: make(chan context.Context, 16), release: make(chan struct{})}
}

func (g *gate) run(ctx context.Context) (string, error) {
	g.started <- ctx
	<-g.release
	return "gated", nil
}

// waitStart returns the ctx of the next run to start.
func (g *gate) waitStart(t *testing.T) context.Context {
	t.Helper()
	select {
	case ctx := <-g.started:
		return ctx
	case <-time.After(waitLimit):
		t.Fatal("job did not start")
		return nil
	}
}

// recv waits for a value on ch.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

func okJob(name, spec string) Job {
	return Job{Name: name, Spec: spec, Run: func(context.Context) (string, error) { return name + " done", nil }}
}

// newStarted builds and starts a scheduler, stopping it at cleanup.
func newStarted(t *testing.T, jobs []Job, opts Options) *Scheduler {
	t.Helper()
	s, err := New(jobs, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_ = s.Stop(ctx)
	})
	return s
}

// yearly never fires during a test.
const yearly = "0 0 1 1 *"
