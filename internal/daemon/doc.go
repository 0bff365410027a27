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
//     finds its job still running is skipped and logged.
//   - A panic in a job is recovered, logged with its stack and counted; it
//     ends only that run.
//   - A run missed while batchd was down is caught up once at Start.
//   - Stop waits for running jobs, up to the shutdown timeout.
//   - Every run logs exactly one line: job, cause, outcome, duration,
//     summary and error.
//
// # Lifecycle, for the run command
//
//	s, err := daemon.New(jobs, opts)        // validates every schedule
//	// open the ledger and recover interrupted work first
//	s.Chain("ingest", "submit")             // optional; or RequestRun in a job
//	s.Start(ctx)                            // ctx: not cancelled by SIGTERM
//	ln, err := net.Listen("tcp", listen)    // fail start-up on a bind error
//	go daemon.ServeListener(adminCtx, ln, s.AdminHandler(adminOpts))
//	s.Ready()                               // READY=1, only now
//	go s.Watchdog(ctx)
//	// SIGHUP: s.Reload(newJobs); SIGINT/SIGTERM:
//	s.Stop(timeoutCtx)                      // STOPPING=1, cancel runs, wait
//
// READY=1 must be sent by the caller, after the ledger is open, recovery is
// done, Start has returned and the admin listener is bound, because systemd
// considers the unit started from then on.
package daemon
