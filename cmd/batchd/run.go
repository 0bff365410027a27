package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/daemon"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/metrics"
	"github.com/batchd/batchd/internal/payment"
)

// runDaemon is `batchd run`: the scheduled daemon. It sends READY=1 only
// after the ledger is open, rows left in flight are recovered and the
// admin listener is bound, stops gracefully on SIGTERM/SIGINT within
// shutdown_timeout (a second signal exits at once), and reloads its
// schedules on SIGHUP.
//
// Every goroutine that may touch the ledger (the job runs, the admin
// server, the watchdog) runs in the scheduler's group, and the ledger is
// closed only by Scheduler.Shutdown, after that group has returned: once
// the scheduler has started, nothing here closes the ledger directly.
func runDaemon(ctx context.Context, env *environ, cl *cmdLine) error {
	cfg, err := cl.config()
	if err != nil {
		return err
	}
	path := cl.path()
	log := newLogger(env.stderr, cfg.Log.Level, cfg.Log.Format)
	m := metrics.New()
	// Every API call feeds the outage watch too, so that /healthz turns
	// red (and batchd_api_failing_seconds grows) while a run retries
	// through an outage, not only when it ends. The watch and the jobs
	// read the same wall clock (jobs.Open).
	outages := daemon.NewOutageWatch(cfg.Health.FailingAfter.Std(), time.Now)
	m.SetAPIFailing(func() time.Duration { return outages.Failing("api") })
	observe := func(endpoint string, status int, d time.Duration) {
		m.ObserveAPI(endpoint, status, d)
		outages.ObserveHTTP("api", endpoint, status)
	}
	je, err := jobs.Open(cfg, log, jobs.Hooks{ObserveAPI: observe, OnRetry: m.APIRetry, OnIngestOutcome: jobs.FileCounter(m),
		OnChecksCreated: m.ChecksCreated, OnSendDropped: m.SendsDropped})
	if err != nil {
		return err
	}
	started := false
	defer func() {
		if !started { // no goroutine of the daemon exists yet
			je.Close()
		}
	}()
	m.SetLimiterRate(je.Limiter.Rate)
	m.SetConcurrencyLimit(func() float64 { return float64(je.InFlight.Current()) })

	errs := daemon.NewErrorRecorder(nil)
	var sched *daemon.Scheduler
	build := func(c *config.Config) []daemon.Job {
		s := jobs.Scheduled{Env: je, Metrics: m, Errors: errs, OnPending: func(ctx context.Context) {
			daemon.RequestRun(ctx, "submit")
		}}
		sc := c.Schedule // each job's deadline is its schedule.<job>_timeout
		js := []daemon.Job{
			{Name: "ingest", Spec: sc.Ingest, Run: s.Ingest, Timeout: sc.IngestTimeout.Std()},
			{Name: "submit", Spec: sc.Submit, Run: s.Submit, Timeout: sc.SubmitTimeout.Std()},
			{Name: "reconcile", Spec: sc.Reconcile, Run: reconcileRun(s), Timeout: sc.ReconcileTimeout.Std(), Args: []string{"from", "to"}},
		}
		if c.Backup.Schedule != "" { // "" takes no snapshots
			js = append(js, daemon.Job{Name: "backup", Spec: c.Backup.Schedule, Run: s.Backup, Timeout: sc.BackupTimeout.Std()})
		}
		if c.Webhook.Enabled() { // at start, on SIGHUP, and hourly
			js = append(js, daemon.Job{Name: "webhook", Spec: "@every 1h", Run: s.Webhook(c.Webhook.URL), Timeout: sc.WebhookTimeout.Std()})
		}
		if c.Retention.KeepDays > 0 { // once a day, after reconcile; without compaction
			js = append(js, daemon.Job{Name: "prune", Spec: jobs.PruneSpec(c.Schedule.Reconcile), Run: s.Prune(c.Retention.KeepDays),
				Timeout: sc.PruneTimeout.Std()})
		}
		return js
	}
	sched, err = daemon.New(build(cfg), daemon.Options{
		Location: cfg.Location(), Logger: log, Metrics: m,
		LastSuccess: func(job string) (time.Time, bool) {
			t, ok, err := je.DB.LastSuccess(job)
			return t, ok && err == nil
		},
		RecordSuccess: je.DB.RecordSuccess,
		Status:        func(context.Context) (any, error) { return jobs.StatusWithChecks(je.DB) },
		StatusNote:    func() string { return statusNote(je.DB) },
		Notifier:      daemon.SystemdNotifier{Logger: log},
		// A run cancelled at its deadline gets as long to wind down as on
		// SIGTERM before it is reported stuck.
		CancelGrace: cfg.ShutdownTimeout.Std(),
		// Only the leader runs jobs, and TakeOver (rows left in flight
		// put in doubt, half-loaded batches discarded) runs before its
		// first: at start on a file ledger, which this process always
		// leads (epoch 1); at each takeover on a shared one, never on a
		// standby, which must not touch the rows the leader is sending.
		Leadership: je.DB, TakeOver: je.DB.TakeOver, LeaseTTL: cfg.State.LeaseTTL.Std(),
		// An instance whose key ring lacks the key the ledger seals with
		// does not lead; the ring file is read again at each renewal.
		MayLead: jobs.MayLead(cfg, je.DB, log),
		// A standby cannot register the webhook URL; the instance that
		// takes over does it at once, not at the next hourly check.
		OnLead: onLead(cfg),
	})
	if err != nil {
		return err
	}
	// Bind before anything runs, so that a bind failure fails start-up
	// with nothing to stop.
	var ln net.Listener
	if cfg.Admin.Listen != "" {
		if ln, err = net.Listen("tcp", cfg.Admin.Listen); err != nil {
			return fmt.Errorf("admin.listen %s: %w", cfg.Admin.Listen, err)
		}
	}
	hook, hookLn, err := webhookReceiver(cfg, je, m)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return err
	}
	// Runs are cancelled by Shutdown, not by a signal on ctx.
	if err := sched.Start(context.WithoutCancel(ctx)); err != nil {
		for _, l := range []net.Listener{ln, hookLn} {
			if l != nil {
				l.Close()
			}
		}
		return err
	}
	started = true
	if ln != nil {
		sched.ServeAdmin(ln, sched.AdminHandler(daemon.AdminOptions{Check: je.DB.Ping, Errors: errs, Outages: outages, Notes: func() map[string]any {
			if m, err := jobs.RestoredMark(je.DB); err == nil && m != nil {
				return map[string]any{"restored": m}
			}
			return nil
		}, Hosts: cfg.Admin.Hosts, Token: cfg.AdminToken(), Release: adminRelease(je.DB, sched)}))
		log.Info("admin server listening", "address", ln.Addr().String(), "hosts", cfg.Admin.Hosts, "token", cfg.AdminToken() != "")
	}
	if hookLn != nil {
		// Its own listener, never the admin one: it faces the internet
		// through the proxy. Shutdown stops it before the ledger closes.
		sched.ServeAdmin(hookLn, hook)
		log.Info("webhook receiver listening", "address", hookLn.Addr().String(), "path", cfg.Webhook.Path+"/…")
		sched.Request("webhook", "start") // now, or again after a run that read the old URL
	}
	sched.Ready()
	sched.StartWatchdog()
	log.Info("batchd running", "config", path, "state", je.DB.Path(), "ingest", cfg.Schedule.Ingest,
		"submit", cfg.Schedule.Submit, "reconcile", cfg.Schedule.Reconcile, "timezone", cfg.Schedule.Timezone)

	return waitForStop(ctx, env, log, cfg, path, sched, build, je.Close)
}

// waitForStop handles signals until a stop: SIGHUP reloads the schedules,
// the first SIGTERM/SIGINT stops gracefully, a second one exits at once.
// A failure of the admin server also stops batchd (with an error, so that
// systemd restarts it). The stop is Scheduler.Shutdown: stop scheduling,
// drain the runs within shutdown_timeout, stop the admin server and the
// watchdog, wait for all of them, and only then closeLedger.
func waitForStop(ctx context.Context, env *environ, log *slog.Logger, cfg *config.Config, path string,
	sched *daemon.Scheduler, build func(*config.Config) []daemon.Job, closeLedger func() error) error {
	for {
		var (
			sig    any
			failed error
		)
		select {
		case <-ctx.Done():
			sig = "context"
		case <-sched.Failed():
			sig, failed = "failure", sched.Err()
			log.Error("stopping: a daemon goroutine failed", "err", failed)
		case s := <-env.signals:
			if s == syscall.SIGHUP {
				reload(env, log, path, cfg, sched, build)
				continue
			}
			sig = s
		}
		log.Info("stopping: no new runs; waiting for running jobs", "signal", fmt.Sprint(sig), "shutdown_timeout", cfg.ShutdownTimeout.String())
		stopCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout.Std())
		done := make(chan error, 1)
		go func() { done <- sched.Shutdown(stopCtx, closeLedger) }()
		for {
			select {
			case err := <-done:
				cancel()
				if err != nil {
					log.Error("stop did not finish cleanly", "err", err)
					return err
				}
				if failed != nil {
					return failed
				}
				log.Info("batchd stopped")
				return nil
			case s := <-env.signals:
				if s == syscall.SIGHUP {
					log.Warn("SIGHUP ignored: batchd is stopping")
					continue
				}
				cancel()
				env.exit(exitInterrupted, s)
				return errInterrupted // reached only when exit returns (tests)
			}
		}
	}
}

// reload re-reads the configuration on SIGHUP. Only the schedules and
// webhook.url (registered at once) take effect without a restart; an
// invalid file is refused and the old configuration stays. old is the
// configuration the daemon started with.
func reload(env *environ, log *slog.Logger, path string, old *config.Config, sched *daemon.Scheduler, build func(*config.Config) []daemon.Job) {
	c, err := config.Load(path, config.Env(env.lookupEnv))
	if err != nil {
		log.Error("SIGHUP: the new configuration is invalid; keeping the old one", "config", path, "err", err)
		return
	}
	if err := sched.Reload(build(c)); err != nil {
		log.Error("SIGHUP: schedules refused; keeping the old ones", "err", err)
		return
	}
	log.Info("SIGHUP: schedules and run timeouts reloaded, for the next runs (other settings take effect at the next restart)",
		"ingest", c.Schedule.Ingest, "submit", c.Schedule.Submit, "reconcile", c.Schedule.Reconcile,
		"ingest_timeout", c.Schedule.IngestTimeout.String(), "submit_timeout", c.Schedule.SubmitTimeout.String(),
		"reconcile_timeout", c.Schedule.ReconcileTimeout.String())
	if c.Webhook.Listen != old.Webhook.Listen || c.Webhook.Path != old.Webhook.Path || c.Webhook.SecretFile != old.Webhook.SecretFile ||
		c.WebhookSecret() != old.WebhookSecret() {
		log.Warn("SIGHUP: the webhook receiver's listen, path and secret take effect at the next restart; webhook.url is registered now")
	}
	if c.Webhook.Enabled() {
		// The registration is checked again, with webhook.url as
		// reloaded; the receiver keeps its listener and secret until a
		// restart.
		sched.Request("webhook", "reload")
	}
}

// webhookReceiver binds webhook.listen and builds the receiver, before
// anything runs, so that a bind failure fails start-up; nil, nil when
// webhooks are disabled.
func webhookReceiver(cfg *config.Config, je *jobs.Env, m *metrics.Metrics) (http.Handler, net.Listener, error) {
	if !cfg.Webhook.Enabled() {
		return nil, nil, nil
	}
	h, err := je.WebhookHandler(m.WebhookDelivery, m.ChecksFinal)
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", cfg.Webhook.Listen)
	if err != nil {
		return nil, nil, fmt.Errorf("webhook.listen %s: %w", cfg.Webhook.Listen, err)
	}
	return h, ln, nil
}

// statusNote is the tail of systemd's STATUS= line.
func statusNote(db jobs.StatusLedger) string {
	st, err := jobs.StatusOf(db)
	if err != nil {
		return "ledger unreadable"
	}
	note := fmt.Sprintf("%d pending, %d in doubt", st.Rows[payment.Pending], st.Rows[payment.InDoubt])
	if st.Restored != nil {
		note += ", restored from a snapshot of " + st.Restored.SnapshotAt.Format("2006-01-02 15:04Z07:00")
	}
	return note
}

// onLead is the jobs a new leader runs at once (daemon.Options.OnLead).
func onLead(cfg *config.Config) []string {
	if cfg.Webhook.Enabled() {
		return []string{"webhook"}
	}
	return nil
}
