package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/state"
)

// runPrune is `batchd prune`: remove finished batches older than a date,
// each after its archive report is written (and delivered), then compact
// the ledger file. It needs the ledger to itself: batchd must be stopped.
// The daemon prunes by itself when retention.keep_days is set, without
// compacting.
func runPrune(ctx context.Context, env *environ, cl *cmdLine) error {
	beforeFlag := cl.String("before", "", "remove finished batches whose last change is before this date (YYYY-MM-DD, in schedule.timezone); required")
	noCompact := cl.Bool("no-compact", false, "prune only; leave the file its size (bbolt reuses the freed pages)")
	cl.require(func() bool { return *beforeFlag != "" }, "--before YYYY-MM-DD is required")
	cfg, err := cl.config()
	if err != nil {
		return err
	}
	loc := cfg.Location()
	before, err := jobs.StartOfDay(*beforeFlag, loc)
	if err != nil {
		return cl.mistake("--before: %v", err)
	}
	log := newLogger(env.stderr, cfg.Log.Level, cfg.Log.Format)
	db, err := jobs.OpenLedger(cfg, state.Options{})
	if err != nil {
		return lockedHint(err)
	}
	release, err := jobs.HoldLease(ctx, db, cfg.State.LeaseTTL.Std(), log)
	if err != nil {
		db.Close()
		return err
	}
	defer release()
	ctx, cancel := stopOnSignal(ctx, env, nil)
	defer cancel()
	res, perr := jobs.Prune(ctx, db, cfg, log, time.Now(), before)
	for i, p := range res.Summary.Pruned {
		fmt.Fprintf(env.stdout, "pruned batch %d (%s): %d rows, last change %s", p.Batch.ID, p.Batch.File, p.Rows,
			p.LastChange.In(loc).Format(time.DateTime))
		if i < len(res.Archives) {
			fmt.Fprintf(env.stdout, "; archive %s", res.Archives[i])
		}
		fmt.Fprintln(env.stdout)
	}
	fmt.Fprintln(env.stdout, res.Describe(loc))
	release() // the lease goes before the ledger closes, not after
	if err := db.Close(); err != nil && perr == nil {
		perr = err
	}
	switch {
	case perr != nil && ctx.Err() != nil:
		return fmt.Errorf("%w: %v; run batchd prune again to continue", errInterrupted, perr)
	case perr != nil:
		return perr
	case *noCompact:
		return nil
	case cfg.State.Backend == config.BackendPostgres:
		// No file to compact: PostgreSQL reclaims the space itself
		// (autovacuum).
		return nil
	}
	c, err := state.Compact(cfg.StateDir, time.Second)
	if err != nil {
		return lockedHint(fmt.Errorf("the batches above were pruned, but %w", err))
	}
	fmt.Fprintf(env.stdout, "compacted %s: %s -> %s\n", c.Path, humanSize(c.Before), humanSize(c.After))
	return nil
}

// lockedHint adds what to do to a refusal of a ledger that another batchd
// holds.
func lockedHint(err error) error {
	if errors.Is(err, state.ErrLocked) {
		return fmt.Errorf("%w\nbatchd prune compacts the ledger file, so it needs the ledger to itself: stop batchd first "+
			"(systemctl stop batchd). A running batchd prunes by itself, without compacting, when retention.keep_days is set", err)
	}
	return err
}

// humanSize words a file size for people.
func humanSize(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KB", (n+1023)>>10)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}
