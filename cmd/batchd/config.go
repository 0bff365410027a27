package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/config"
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

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
