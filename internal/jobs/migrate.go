package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/state/postgres"
)

// The ledger's administrative commands (batchd migrate-state,
// mark-restored, check) need a PostgreSQL ledger as a *state.DB, for the
// operations outside the jobs' contract (Check, CopyTo, MarkRestored),
// and migrate-state needs the bare store to copy into. These helpers give
// them both, with OpenLedger's bounds and scrubbed errors, and without a
// type assertion on a Ledger.

// OpenPostgresStore connects to the database of dsn and applies the
// schema's migrations, within openTimeout. fencing says whether the
// store's writes check the leader lease: true for a ledger in use, false
// for a store a copy is filling, which no instance leads yet. Its errors
// never quote the DSN or its password.
//
// Fencing is on for a ledger in use: only the instance holding the lease
// (the daemon's leader loop, or a one-shot command through HoldLease)
// changes rows; a standby's webhook receiver records events through the
// unfenced path. A session idle inside a transaction is ended by the
// server after a third of lease (at least a second): a leader frozen in
// the middle of a write (SIGSTOP, a VM pause) would otherwise hold the
// lease row and the write lock, and keep a standby from taking over
// within two lease periods.
func OpenPostgresStore(dsn string, fencing bool, lease time.Duration) (*postgres.Store, error) {
	if dsn == "" {
		return nil, fmt.Errorf("open the PostgreSQL ledger: no DSN (state.postgres_dsn_file or $%s)", config.EnvPostgresDSN)
	}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	store, err := postgres.Open(ctx, dsn, postgres.Options{Fencing: fencing, IdleInTxTimeout: max(lease/3, time.Second)})
	if err != nil {
		return nil, scrubDSN(err, dsn)
	}
	return store, nil
}

// LedgerOnStore opens the ledger store holds, the store's leader lease its
// elector. Closing the DB closes the store; on an error the caller still
// owns the store.
func LedgerOnStore(store *postgres.Store, opts state.Options) (*state.DB, error) {
	return state.OpenStore(store, store.Elector(), opts)
}

// OpenPostgresDB is OpenLedger's PostgreSQL ledger as a *state.DB: the
// config's database, fenced, with state.send_window's send window. opts
// is used as given otherwise (set Watermark for a command that may take
// over). It refuses a config whose state.backend is not postgres.
func OpenPostgresDB(cfg *config.Config, opts state.Options) (*state.DB, error) {
	if cfg.State.Backend != config.BackendPostgres {
		return nil, fmt.Errorf("open the PostgreSQL ledger: state.backend is %q, not %s", cfg.State.Backend, config.BackendPostgres)
	}
	dsn := cfg.PostgresDSN()
	store, err := OpenPostgresStore(dsn, true, cfg.State.LeaseTTL.Std())
	if err != nil {
		return nil, err
	}
	opts.SendWindow = cfg.State.Window()
	if err := withAccountKeys(cfg, &opts); err != nil {
		store.Close()
		return nil, err
	}
	db, err := LedgerOnStore(store, opts)
	if err != nil {
		store.Close()
		return nil, scrubDSN(err, dsn)
	}
	return db, nil
}
