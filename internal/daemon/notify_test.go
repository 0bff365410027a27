package daemon

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNotifierOrder(t *testing.T) {
	t.Parallel()
	n := newFakeNotifier()
	logs := newLogSink()
	g := newGate()
	ingest := Job{Name: "ingest", Spec: yearly, Run: g.run}
	s := newStarted(t, []Job{ingest, okJob("reconcile", yearly)}, Options{
		Notifier: n, Logger: logs.logger(),
		StatusNote: func() string { return "3 rows in doubt" },
	})
	s.Ready()
	if err := s.Trigger("ingest"); err != nil { // sends "ingest running" before returning
		t.Fatal(err)
	}
	g.waitStart(t)
	close(g.release)
	s.wg.Wait()
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev := n.snapshot()
	idx := func(pred func(string) bool) int { return slices.IndexFunc(ev, pred) }
	ready := idx(func(e string) bool { return e == "READY=1" })
	running := idx(func(e string) bool { return strings.HasPrefix(e, "STATUS=ingest running;") })
	done := idx(func(e string) bool {
		return e == "STATUS=ingest ok 0s ago; reconcile not run yet; 3 rows in doubt"
	})
	stopping := idx(func(e string) bool { return e == "STOPPING=1" })
	last := ev[len(ev)-1]
	if ready != 0 || running < ready || done < running || stopping < done ||
		!strings.HasPrefix(last, "STATUS=stopping; ") {
		t.Fatalf("sd_notify order: READY=%d running=%d done=%d STOPPING=%d last=%q; events %q",
			ready, running, done, stopping, last, ev)
	}
	if slices.ContainsFunc(ev[1:], func(e string) bool { return e == "READY=1" }) {
		t.Errorf("READY sent twice: %q", ev)
	}
}

func TestWatchdogPingsWhileAlive(t *testing.T) {
	// t.Setenv: not parallel.
	t.Setenv("WATCHDOG_USEC", "40000") // pings every 20ms
	t.Setenv("WATCHDOG_PID", "")
	n := newFakeNotifier()
	s := newStarted(t, []Job{okJob("ingest", yearly)}, Options{Notifier: n})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		s.Watchdog(ctx)
		close(done)
	}()
	n.waitCount(t, "WATCHDOG=1", 3)
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Pings stop with the scheduler. One may race with Stop (alive was
	// checked just before), never more.
	cancel()
	recv(t, done, "Watchdog to return")
	ev := n.snapshot()
	stop := slices.Index(ev, "STOPPING=1")
	late := 0
	for _, e := range ev[stop:] {
		if e == "WATCHDOG=1" {
			late++
		}
	}
	if late > 1 {
		t.Errorf("%d watchdog pings after STOPPING=1: %q", late, ev)
	}

	t.Setenv("WATCHDOG_USEC", "")
	returned := make(chan struct{})
	go func() {
		s.Watchdog(context.Background()) // no watchdog requested: returns at once
		close(returned)
	}()
	recv(t, returned, "Watchdog without WATCHDOG_USEC to return")
}

func TestSystemdNotifierSends(t *testing.T) {
	dir, err := os.MkdirTemp("", "sd") // short: socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	n := SystemdNotifier{}
	n.Ready()
	n.Status("ingest ok\n1m ago")
	n.Watchdog()
	n.Stopping()
	want := []string{"READY=1", "STATUS=ingest ok 1m ago", "WATCHDOG=1", "STOPPING=1"}
	buf := make([]byte, 4096)
	for _, w := range want {
		_ = conn.SetReadDeadline(time.Now().Add(waitLimit))
		k, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("read datagram: %v", err)
		}
		if got := string(buf[:k]); got != w {
			t.Errorf("datagram %q, want %q", got, w)
		}
	}
	t.Setenv("NOTIFY_SOCKET", "")
	n.Ready() // no socket: a no-op, no panic
}

func TestAgo(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 42 * time.Second: "42s", 2 * time.Minute: "2m",
		5 * time.Hour: "5h", 47 * time.Hour: "47h", 72 * time.Hour: "3d",
	} {
		if got := ago(d); got != want {
			t.Errorf("ago(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestErrorRecorder(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 10, 7, 0, 0, 0, time.UTC)
	r := NewErrorRecorder(func() time.Time { return at })
	r.Record("api", nil)
	r.Record("api", context.DeadlineExceeded)
	r.Record("sftp", os.ErrNotExist)
	r.Clear("sftp")
	got := r.Last()
	if len(got) != 1 || got["api"].Error != "context deadline exceeded" || !got["api"].At.Equal(at) {
		t.Errorf("Last() = %v", got)
	}
	var nilRec *ErrorRecorder
	nilRec.Record("api", os.ErrClosed)
	if nilRec.Last() != nil {
		t.Error("nil recorder returned errors")
	}
}
