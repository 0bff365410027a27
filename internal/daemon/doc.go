// Package daemon runs batchd's jobs on cron schedules and serves the admin
// HTTP API, with systemd integration (sd_notify readiness, status and
// watchdog).
//
// It is generic: a Job is a name, a schedule and a Run function; the jobs
// themselves (ingest, submit, reconcile) live elsewhere. What it adds to
// robfig/cron is what a payment daemon needs of a scheduler:
//
//   - Runs of one job never overlap, whether started by the schedule,
//     Trigger (the admin API), catch-up or a chain. A scheduled run that
//     finds its job still running is skipped: counted in
//     batchd_job_skipped_total at every such tick, logged once per run
//     with the start of the run it waits for.
//   - Each run has a deadline (Job.Timeout). Past it the run's ctx is
//     cancelled (cause ErrTimeout) and the run is recorded failed with
//     source "timeout", whatever it returns. A run that still has not
//     returned Options.CancelGrace later is reported stuck (logged,
//     counted, /healthz failing) and stays marked running: a goroutine
//     cannot be killed, and a second run must never overlap it.
//   - Every job's series exist from New: its last success at 0 until a
//     first success, its counters at 0; batchd_start_time_seconds is set
//     at Start, so "never succeeded" alerts can measure from it.
//   - A panic in a job is recovered, logged with its stack and counted; it
//     ends only that run.
//   - A run missed while batchd was down is caught up once at Start.
//   - Stop waits for running jobs, up to the shutdown timeout.
//   - Every run logs exactly one line: job, cause, outcome, duration,
//     summary, error and the error's source ("sftp", "api", "ledger").
//   - Only a run that returned nil, uninterrupted, is a success (recorded
//     as the job's last success). A run that returned an error, including
//     "work left undone", is "failed": counted in
//     batchd_job_runs_total{outcome="failed"} and shown by /healthz as
//     unhealthy, with its source, until the job next succeeds.
//   - Every goroutine that may touch the ledger (runs, the admin server,
//     the watchdog, the leader loop) belongs to one errgroup, which
//     Shutdown waits for before it closes the ledger.
//   - With Options.Leadership, only the instance holding the ledger's
//     lease runs jobs (leader.go): it renews the lease every LeaseTTL/3,
//     calls TakeOver before its first run, cancels its runs at once when
//     it loses the lease (or a write is fenced: source "fenced"), and
//     resigns at Shutdown. A standby skips every tick (counted with
//     reason "standby") and keeps serving /healthz, /metrics and the
//     webhook receiver; /healthz names the leader, and fails only when
//     no instance has led for twice the TTL.
//
// # Lifecycle, for the run command
//
//	s, err := daemon.New(jobs, opts)        // validates every schedule
//	// open the ledger and recover interrupted work first
//	s.Chain("ingest", "submit")             // optional; or RequestRun in a job
//	ln, err := net.Listen("tcp", listen)    // fail start-up on a bind error
//	s.Start(ctx)                            // ctx: not cancelled by SIGTERM
//	s.ServeAdmin(ln, s.AdminHandler(adminOpts))
//	s.Ready()                               // READY=1, only now
//	s.StartWatchdog()
//	// SIGHUP: s.Reload(newJobs); SIGINT/SIGTERM, or <-s.Failed():
//	s.Shutdown(timeoutCtx, ledger.Close)    // see Shutdown for the order
//
// Shutdown stops scheduling (STOPPING=1), drains the runs (cancels their
// ctx and waits until timeoutCtx ends), stops the admin server and the
// watchdog, waits for the whole group, resigns the leader lease, and only
// then closes the ledger.
//
// READY=1 must be sent by the caller, after the ledger is open, recovery is
// done, Start has returned and the admin listener is bound, because systemd
// considers the unit started from then on.
package daemon
