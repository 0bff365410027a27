package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/daemon"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/reconcile"
	"github.com/batchd/batchd/internal/retry"
)

// reconcileRun is the daemon's reconcile job: over the default window,
// or over the one a manual run was given (from, to: `batchd reconcile
// --from --to` while the daemon runs).
func reconcileRun(s jobs.Scheduled) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		args := daemon.Args(ctx)
		w, err := reconcile.ParseWindow(args.Get("from"), args.Get("to"))
		if err != nil {
			return "", fmt.Errorf("reconcile: %w", err)
		}
		return s.ReconcileWindow(ctx, w)
	}
}

// reconcilePoll is how often `batchd reconcile` asks the daemon whether
// its run has finished.
const reconcilePoll = 500 * time.Millisecond

// reconcileThroughAdmin asks the running batchd for a reconcile over
// window (nil: the default one), waits for that run, prints its summary
// and returns its error: the exit code is the run's outcome.
func reconcileThroughAdmin(ctx context.Context, env *environ, cfg *config.Config, window *reconcile.Window) error {
	c, err := newAdminClient(cfg, "reconcile", "")
	if err != nil {
		return err
	}
	path := "/v1/jobs/reconcile"
	if window != nil {
		path += "?" + url.Values{"from": {window.From.String()}, "to": {window.To.String()}}.Encode()
	}
	var started struct{ Run uint64 }
	for {
		_, err = c.do(ctx, http.MethodPost, path, nil, &started)
		if !refusedWith(err, http.StatusConflict) {
			break
		}
		// A scheduled run is going: wait for it, then ask for this one.
		fmt.Fprintln(env.stderr, "batchd reconcile: the daemon's reconcile is running; waiting to start this one")
		if err := retry.Sleep(ctx, reconcilePoll); err != nil {
			return err
		}
	}
	if err != nil {
		if refusedWith(err, http.StatusServiceUnavailable) {
			return fmt.Errorf("the batchd at %s cannot run it: %w; run batchd reconcile on the host that leads", c.addr, err)
		}
		return err
	}
	fmt.Fprintf(env.stdout, "reconcile run %d started in the running batchd (admin %s); waiting for it\n", started.Run, c.addr)
	for {
		if err := retry.Sleep(ctx, reconcilePoll); err != nil {
			return err
		}
		var h struct{ Jobs []daemon.JobHealth }
		if _, err := c.do(ctx, http.MethodGet, "/healthz", nil, &h); err != nil && !refusedWith(err, http.StatusServiceUnavailable) {
			return err
		}
		for _, j := range h.Jobs {
			if j.Name != "reconcile" {
				continue
			}
			if j.Runs < started.Run {
				// Its count of runs started again from zero.
				return fmt.Errorf("the running batchd restarted before reconcile run %d finished: see its log, and run batchd reconcile again", started.Run)
			}
			if j.LastRun < started.Run {
				if j.Stuck {
					// Its deadline passed and it did not return: the
					// daemon's /healthz and log say why.
					return fmt.Errorf("reconcile run %d is stuck past its deadline (schedule.reconcile_timeout) in the running batchd: see its /healthz and log", started.Run)
				}
				continue
			}
			if j.LastRun > started.Run {
				return fmt.Errorf("reconcile run %d finished, but a later run (%d) has finished since: see the daemon's log for run %d's outcome", started.Run, j.LastRun, started.Run)
			}
			fmt.Fprintln(env.stdout, j.LastSummary)
			if j.LastOutcome != daemon.OutcomeOK {
				return fmt.Errorf("reconcile run %d %s: %s", started.Run, j.LastOutcome, j.LastError)
			}
			return nil
		}
	}
}
