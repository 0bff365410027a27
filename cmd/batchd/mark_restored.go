package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/state"
)

// runMarkRestored is `batchd mark-restored --at TIME`: the operator says
// that the PostgreSQL ledger's database was put back to TIME (pg_dump
// restored, or point-in-time recovery), which batchd cannot always notice
// by itself (state/watermark.go). It applies `batchd restore`'s rules:
// every row without a check, and every funding row without a result,
// goes in doubt, to be looked up before any send, and the ledger gets a
// new instance id, so no new batch reuses a label a lost one carried.
//
// It takes the leader lease first, and is refused while a daemon leads:
// the mark must be in place before any instance sends again.
func runMarkRestored(ctx context.Context, env *environ, cl *cmdLine) error {
	at := cl.String("at", "", "the moment the database was restored to, RFC 3339 (the dump's time, or the recovery target), e.g. 2026-11-25T18:00:00Z (required)")
	from := cl.String("from", "the operator's restore of the database", "what was restored, for the mark (e.g. the dump's file name)")
	if err := cl.parse(); err != nil {
		return err
	}
	when, err := time.Parse(time.RFC3339, *at)
	if err != nil {
		return cl.badUsage("--at: want an RFC 3339 time such as 2026-11-25T18:00:00Z, got %q", *at)
	}
	if when.After(time.Now()) {
		return fmt.Errorf("--at %s is in the future: give the moment the database was restored to", *at)
	}
	cfg, err := cl.load()
	if err != nil {
		return err
	}
	if cfg.State.Backend != config.BackendPostgres {
		return fmt.Errorf("the ledger is the bbolt file in %s, not a PostgreSQL database: install a snapshot with `batchd restore --from SNAPSHOT`, which applies the same rules", cfg.StateDir)
	}
	m, err := markRestored(ctx, env, cfg, when, *from)
	if err != nil {
		return err
	}
	w := env.stdout
	fmt.Fprintf(w, "marked the ledger restored to %s (%s)\n", m.SnapshotAt.Format(time.RFC3339), m.From)
	fmt.Fprintf(w, "%d rows without a check were put in doubt: the next submit looks each up and sends only those the service does not have\n", m.RowsInDoubt)
	fmt.Fprintf(w, "new instance id %s (was %s): new batches get labels no lost batch can have carried\n", m.Instance, m.PreviousInstance)
	fmt.Fprintln(w, "next: start batchd (or run `batchd submit`, then `batchd reconcile`); files accepted after that moment are not in this ledger: see the next reconcile's exceptions for checks it does not know")
	return nil
}

// markRestored opens the configured PostgreSQL ledger, holds its lease
// and marks it restored to at.
func markRestored(ctx context.Context, env *environ, cfg *config.Config, at time.Time, from string) (*state.RestoreMark, error) {
	// This host's watermark: written as the mark commits, under the new
	// instance, so that this host compares the restored database with
	// counts of the restored database from now on.
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("create state_dir for this host's files: %w", err)
	}
	db, err := jobs.OpenPostgresDB(cfg, state.Options{Watermark: filepath.Join(cfg.StateDir, jobs.WatermarkName)})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	log := newLogger(env.stderr, cfg.Log.Level, cfg.Log.Format)
	release, err := jobs.HoldLease(ctx, db, cfg.State.LeaseTTL.Std(), log)
	if errors.Is(err, jobs.ErrNotLeader) {
		who := ""
		if li, lerr := db.Leader(ctx); lerr == nil {
			who = " (" + li.String() + ")"
		}
		return nil, fmt.Errorf("%w%s: stop every batchd that shares the database first: the mark must be in place before any of them sends again", jobs.ErrNotLeader, who)
	}
	if err != nil {
		return nil, err
	}
	defer release()
	return db.MarkRestored(at, from)
}
