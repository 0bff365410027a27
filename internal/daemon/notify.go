package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"
)

// Notifier sends service state to the service manager (sd_notify).
// Methods must be safe for concurrent use and must not block for long.
type Notifier interface {
	Ready()             // READY=1: start-up is complete
	Stopping()          // STOPPING=1: shutdown has begun
	Status(line string) // STATUS=<line>: shown by systemctl status
	Watchdog()          // WATCHDOG=1: keep-alive ping
}

// SystemdNotifier sends to $NOTIFY_SOCKET with go-systemd's SdNotify.
// Without NOTIFY_SOCKET (not under systemd, or Type= is not notify) every
// method does nothing. Send failures are logged at debug level only: the
// service manager going away is not batchd's problem to report.
type SystemdNotifier struct {
	Logger *slog.Logger // nil discards
}

// Ready sends READY=1.
func (n SystemdNotifier) Ready() { n.send(sd.SdNotifyReady) }

// Stopping sends STOPPING=1.
func (n SystemdNotifier) Stopping() { n.send(sd.SdNotifyStopping) }

// Status sends STATUS=line, with line breaks replaced by spaces since the
// protocol is line based.
func (n SystemdNotifier) Status(line string) {
	n.send("STATUS=" + strings.NewReplacer("\n", " ", "\r", " ").Replace(line))
}

// Watchdog sends WATCHDOG=1.
func (n SystemdNotifier) Watchdog() { n.send(sd.SdNotifyWatchdog) }

func (n SystemdNotifier) send(state string) {
	// unsetEnvironment=false: NOTIFY_SOCKET must stay for later messages.
	if _, err := sd.SdNotify(false, state); err != nil && n.Logger != nil {
		n.Logger.Debug("sd_notify failed", "state", strings.SplitN(state, "=", 2)[0], "error", err.Error())
	}
}

// nopNotifier is used when Options.Notifier is nil.
type nopNotifier struct{}

func (nopNotifier) Ready()        {}
func (nopNotifier) Stopping()     {}
func (nopNotifier) Status(string) {}
func (nopNotifier) Watchdog()     {}

// Ready tells the service manager that batchd is up (READY=1), then sends
// the current status line. The caller sends it once the ledger is open,
// recovery of interrupted work is done, Start has returned and the admin
// listener is bound: systemd treats the unit as started from then on, so
// READY=1 must not precede anything that can still fail start-up.
func (s *Scheduler) Ready() {
	s.opts.Notifier.Ready()
	s.updateStatus()
}

// Watchdog pings the service manager's watchdog (WATCHDOG=1) at half the
// interval systemd asks for (WatchdogSec=, seen as $WATCHDOG_USEC), until
// ctx is done. It pings only while the scheduler is alive, so a wedged
// scheduler, or one that has begun to stop, gets restarted (Restart=) rather
// than left hanging. Without a watchdog request it returns at once. Run it
// with StartWatchdog after Start, so that Shutdown stops and waits for it.
func (s *Scheduler) Watchdog(ctx context.Context) {
	interval, err := sd.SdWatchdogEnabled(false)
	if err != nil {
		s.log.Warn("watchdog disabled: bad watchdog settings from systemd", "error", err.Error())
		return
	}
	if interval <= 0 {
		return
	}
	tick := time.NewTicker(interval / 2)
	defer tick.Stop()
	for {
		if s.alive() {
			s.opts.Notifier.Watchdog()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// updateStatus sends the current status line. The line is computed and
// sent under one lock, so the last line systemd sees is the newest.
func (s *Scheduler) updateStatus() {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	s.opts.Notifier.Status(s.statusLine())
}

// statusLine summarises every job in one line, such as
// "ingest ok 2m ago; submit running; reconcile ok 20h ago; 3 rows in doubt".
// A standby's line starts with its role: "standby; HOST:PID leads (…)".
func (s *Scheduler) statusLine() string {
	now := s.now()
	s.mu.Lock()
	parts := make([]string, 0, len(s.order)+2)
	if s.state == stopping {
		parts = append(parts, "stopping")
	}
	if r := s.roleLocked(now); r != nil && !r.Leading {
		// A standby says so first: its jobs' lines are history.
		parts = append(parts, r.Text)
	}
	for _, name := range s.order {
		parts = append(parts, jobStatus(name, s.jobs[name], now))
	}
	s.mu.Unlock()
	if s.opts.StatusNote != nil {
		if note := s.opts.StatusNote(); note != "" {
			parts = append(parts, note)
		}
	}
	return strings.Join(parts, "; ")
}

func jobStatus(name string, st *jobState, now time.Time) string {
	switch {
	case st.running && st.stuck:
		return name + " stuck past its deadline"
	case st.running:
		return name + " running"
	case st.last != nil:
		return fmt.Sprintf("%s %s %s ago", name, st.last.outcome, ago(now.Sub(st.last.end)))
	case !st.lastSuccess.IsZero():
		return fmt.Sprintf("%s ok %s ago", name, ago(now.Sub(st.lastSuccess)))
	default:
		return name + " not run yet"
	}
}

// ago formats an age coarsely, for a status line a person glances at.
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(0, int(d/time.Second)))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	default:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
}
