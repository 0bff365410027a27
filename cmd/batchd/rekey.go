package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/state"
)

// runRekey is `batchd rekey`: add a new key to the ring, seal every full
// account number of the ledger under it, compact a bbolt ledger so that
// no freed page keeps the old ciphertext, and then drop the old keys
// from the ring file, unless some rows could not be opened (their key
// is lost: batchd rekey names them and keeps the old keys). Resealing
// needs the ledger to itself, as prune does; while a batchd runs
// (heldByDaemon) the new key is still taken up, by the running batchd
// itself, and only the reseal waits. Backups made before keep needing
// the old keys: keep a copy of the old ring file with them.
func runRekey(ctx context.Context, env *environ, cl *cmdLine) error {
	keep := cl.Bool("keep-old-keys", false, "keep the old keys in the ring file (to read backups made before)")
	cfg, err := cl.config()
	if err != nil {
		return err
	}
	path := jobs.AccountKeysPath(cfg)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("rekey: the key ring %s: %w (with backend postgres, set state.account_keys_file to the same file on every instance)", path, err)
	}
	id, err := acctseal.AddKey(path)
	if err != nil {
		return fmt.Errorf("rekey: %w", err)
	}
	fmt.Fprintf(env.stdout, "added key %d to %s; it seals from now on\n", id, path)
	db, done, err := openLeading(ctx, env, cfg)
	if errors.Is(err, state.ErrLocked) || errors.Is(err, jobs.ErrNotLeader) {
		heldByDaemon(env, cfg, path, id)
		return nil
	}
	if err != nil {
		return err
	}
	rep, serr := db.SealAccounts()
	if err := done(); err != nil && serr == nil {
		serr = err
	}
	if serr != nil {
		return fmt.Errorf("rekey: %w; the ring keeps every key, run batchd rekey again", serr)
	}
	// Opening a bbolt ledger already reseals (state.Open): this pass
	// finds what is left, and on PostgreSQL does the work.
	fmt.Fprintf(env.stdout, "every readable account number is sealed under key %d (%d moved in the last pass)\n", id, rep.Clear+rep.Resealed)
	if rep.Tokens+rep.TokensDropped > 0 { // api.accounts: tokenize
		fmt.Fprintf(env.stdout, "account tokens: %d sealed under key %d, %d no key opened dropped (tokenized again when next paid)\n",
			rep.Tokens, id, rep.TokensDropped)
	}
	if cfg.State.Backend != config.BackendPostgres {
		c, err := state.Compact(cfg.StateDir, time.Second)
		if err != nil {
			return lockedHint(fmt.Errorf("rekey: the numbers are sealed under key %d, but %w; the ring keeps every key", id, err))
		}
		fmt.Fprintf(env.stdout, "compacted %s: %s -> %s\n", c.Path, humanSize(c.Before), humanSize(c.After))
	}
	return dropOldKeys(env, path, rep, *keep)
}

// heldByDaemon says what happens to a key rekey added while a batchd
// runs: that batchd reads its ring file again at every lease renewal
// (jobs.MayLead), records the new key and seals new rows under it; the
// rows sealed before keep their keys, so every key stays in the ring.
func heldByDaemon(env *environ, cfg *config.Config, path string, id uint32) {
	fmt.Fprintf(env.stdout, "a running batchd holds the ledger: within state.lease_ttl/3 (%s) it reads %s again, records key %d "+
		"and seals new rows under it, so that no instance whose ring lacks the key leads: copy %s to every instance now.\n",
		cfg.State.LeaseTTL.Std()/3, path, id, path)
	fmt.Fprintln(env.stdout, "the rows sealed before keep their keys, and the ring keeps every key; to reseal them and drop the old keys, "+
		"run batchd rekey with batchd stopped (a bbolt ledger is resealed when batchd next starts)")
}

// dropOldKeys ends rekey: the ring keeps only the newest key unless asked
// to keep them, or unless rows sealed under a key it lacks remain.
func dropOldKeys(env *environ, path string, rep state.SealReport, keep bool) error {
	if len(rep.Unreadable) > 0 {
		return fmt.Errorf("rekey: %d row(s) hold an account number no key of %s opens (%s): their key is lost; the old keys are kept. "+
			"Mark them not sent with `batchd keylost`, then send their file again", len(rep.Unreadable), path, strings.Join(first(rep.Unreadable, 10), ", "))
	}
	if keep {
		fmt.Fprintf(env.stdout, "kept the old keys in %s (--keep-old-keys)\n", path)
		return nil
	}
	if err := acctseal.DropOldKeys(path); err != nil {
		return fmt.Errorf("rekey: %w", err)
	}
	fmt.Fprintf(env.stdout, "dropped the old keys from %s; backups made before need a copy of the old ring file\n", path)
	return nil
}

// first is at most n of names.
func first(names []string, n int) []string { return names[:min(len(names), n)] }
