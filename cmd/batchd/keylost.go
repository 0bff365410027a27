package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/state"
)

// runKeyLost is `batchd keylost`: reject every row never sent whose
// account number no key of the ring opens (its key was lost), with the
// reason "key lost", and name them, so that the finance team sends those
// payments again. Rows in flight or in doubt are left to their lookup;
// run it again after submit has resolved them. It needs the ledger to
// itself, as prune does.
func runKeyLost(ctx context.Context, env *environ, cl *cmdLine) error {
	cfg, err := cl.config()
	if err != nil {
		return err
	}
	db, done, err := openLeading(ctx, env, cfg)
	if err != nil {
		return err
	}
	names, err := db.MarkKeyLost()
	if cerr := done(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintf(env.stdout, "rejected %s: %s\n", n, state.KeyLostNote)
	}
	fmt.Fprintf(env.stdout, "%d row(s) rejected because their key is lost\n", len(names))
	return nil
}

// openLeading opens the ledger for a command that changes it while no
// batchd runs (rekey, keylost): without the snapshot socket, under the
// leader lease on a shared ledger. done releases the lease and closes it.
func openLeading(ctx context.Context, env *environ, cfg *config.Config) (state.Ledger, func() error, error) {
	db, err := jobs.OpenLedger(cfg, state.Options{NoSnapshots: true})
	if err != nil {
		return nil, nil, lockedHint(err)
	}
	release, err := jobs.HoldLease(ctx, db, cfg.State.LeaseTTL.Std(), newLogger(env.stderr, cfg.Log.Level, cfg.Log.Format))
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, func() error { release(); return db.Close() }, nil
}

// printInClear names the rows of r that hold a full account number in
// the clear (never the number), and the fix.
func printInClear(w io.Writer, r *state.Report) {
	c := r.InClear
	if c.Rows == 0 {
		return
	}
	fmt.Fprintf(w, "account numbers in the clear: %d row(s): %s", c.Rows, strings.Join(c.First, ", "))
	if c.Rows > len(c.First) {
		fmt.Fprintf(w, ", … and %d more", c.Rows-len(c.First))
	}
	fmt.Fprintln(w, "\n  batchd seals a bbolt ledger's when it next opens it (batchd init does); on PostgreSQL run batchd rekey, every batchd stopped")
}
