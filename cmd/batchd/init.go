package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/state"
)

// runInit is `batchd init`: create the ledger in state_dir, with the
// marker beside it that keeps a lost ledger from ever being replaced by an
// empty one. The first start of any command does the same in a state
// directory that has neither; init only does it on purpose. On an
// existing ledger it checks that it opens and changes nothing.
func runInit(ctx context.Context, env *environ, cl *cmdLine) error {
	cfg, err := cl.config()
	if err != nil {
		return err
	}
	_, statErr := os.Lstat(filepath.Join(cfg.StateDir, state.FileName))
	existed := !errors.Is(statErr, os.ErrNotExist)
	_, keysErr := os.Lstat(jobs.AccountKeysPath(cfg))
	if cfg.State.Backend == config.BackendPostgres && errors.Is(keysErr, os.ErrNotExist) {
		// The ledger opens a shared ring only where it is named; init is
		// where an operator makes it, on one host, to copy to the others.
		if _, _, err := acctseal.LoadOrCreate(jobs.AccountKeysPath(cfg)); err != nil {
			return err
		}
	}
	db, err := jobs.OpenLedger(cfg, state.Options{NoSnapshots: true})
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := os.Lstat(jobs.AccountKeysPath(cfg)); err == nil && errors.Is(keysErr, os.ErrNotExist) {
		fmt.Fprintf(env.stdout, "created the key ring %s that seals account numbers in the ledger (mode 0600); "+
			"back it up apart from the ledger: without it, rows not yet sent cannot be sent\n", jobs.AccountKeysPath(cfg))
		if cfg.State.Backend == config.BackendPostgres {
			fmt.Fprintf(env.stdout, "copy it (mode 0600) to %s on every instance that shares the database: one without it does not lead\n",
				jobs.AccountKeysPath(cfg))
		}
	}
	if existed {
		fmt.Fprintf(env.stdout, "the ledger %s exists already (instance %s); nothing to do\n", db.Path(), db.Instance())
		return nil
	}
	fmt.Fprintf(env.stdout, "created the ledger %s (instance %s); %s beside it records that it exists\n",
		db.Path(), db.Instance(), filepath.Join(cfg.StateDir, state.MarkerName))
	return nil
}
