package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/jobs"
)

// loadConfig reads the configuration named by --config, $BATCHD_CONFIG or
// the default path.
func loadConfig(env *environ, flagPath string) (*config.Config, error) {
	return config.Load(config.Path(flagPath, env.getenv), config.Env(env.lookupEnv))
}

// stopOnSignal returns a context cancelled by the first SIGINT or SIGTERM
// (a graceful stop). A second signal exits at once with exitInterrupted:
// safe, because every create's intent is on disk before it is sent.
func stopOnSignal(ctx context.Context, env *environ, onFirst func(os.Signal)) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if env.signals == nil {
		return ctx, cancel
	}
	go func() {
		select {
		case sig := <-env.signals:
			if onFirst != nil {
				onFirst(sig)
			}
			cancel()
		case <-ctx.Done():
			return
		}
		sig := <-env.signals
		env.exit(exitInterrupted, sig)
	}()
	return ctx, cancel
}

// withMaxDuration bounds a run; zero means no bound.
func withMaxDuration(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// openJobs loads the configuration and opens the ledger, client and
// limiter that a one-shot job command uses.
func openJobs(env *environ, cfgPath string, hooks jobs.Hooks) (*config.Config, *slog.Logger, *jobs.Env, error) {
	return openJobsOn(env, cfgPath, hooks, "")
}

// openJobsOn is openJobs on a rehearsal day (--date YYYY-MM-DD; "" is
// today): the jobs' clock stands at noon that day in schedule.timezone
// and runs on from there (jobs.ClockOn). Only api.mode: test may
// rehearse: a live run on another day would stamp the ledger and judge
// authorization dates on a date that is not today.
func openJobsOn(env *environ, cfgPath string, hooks jobs.Hooks, date string) (*config.Config, *slog.Logger, *jobs.Env, error) {
	cfg, err := loadConfig(env, cfgPath)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now
	if date != "" {
		d, err := time.Parse(time.DateOnly, date)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--date: want YYYY-MM-DD, got %q", date)
		}
		if cfg.API.Mode != config.ModeTest {
			return nil, nil, nil, fmt.Errorf("--date %s: a rehearsal date needs api.mode: test (api.mode is %s); a live run always runs on today", date, cfg.API.Mode)
		}
		now = jobs.ClockOn(d, cfg.Location())
	}
	log := newLogger(env.stderr, cfg.Log.Level, cfg.Log.Format)
	je, err := jobs.OpenAt(cfg, log, hooks, now)
	if err != nil {
		return nil, nil, nil, err
	}
	// A one-shot command leads the ledger while it runs: on a shared one
	// it takes the lease (refused while a daemon leads), and Close gives
	// it up. It is refused too, as batchd run is, on a host whose key
	// ring lacks the key the rows are sealed under: it could send none of
	// them, and would seal new ones the other hosts cannot open.
	if cfg.State.Backend == config.BackendPostgres {
		if err := jobs.MayLead(cfg, je.DB, log)(false); err != nil {
			je.Close()
			return nil, nil, nil, err
		}
	}
	release, err := je.HoldLease(context.Background())
	if err != nil {
		je.Close()
		return nil, nil, nil, err
	}
	je.OnClose(release)
	return cfg, log, je, nil
}

// configFlag declares the --config flag every job command takes.
func configFlag(fs *flag.FlagSet) *string {
	return fs.String("config", "", "configuration file (default $BATCHD_CONFIG, else /etc/batchd/batchd.yaml)")
}
