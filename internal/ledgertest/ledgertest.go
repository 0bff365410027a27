// Package ledgertest gives job tests their ledger on either backend, so
// one test body runs on bbolt and on PostgreSQL: Open for a ledger of the
// given backend, Each to run a test once per backend.
//
// A PostgreSQL ledger is opened as production opens it (jobs.OpenLedger):
// the store with fencing on, under state.OpenStore, with the default send
// window; the test then holds the leader lease for its whole run, as a
// one-shot command does (jobs.HoldLease), so its writes pass the fence.
// Each PostgreSQL ledger lives in a fresh database of the test binary's
// shared server: a package that uses this backend needs
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// No environment switch chooses the backend: CI runs both, always.
package ledgertest

import (
	"context"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/state/postgres"
)

// The backends, by their state.backend names.
const (
	Bbolt    = config.BackendBbolt
	Postgres = config.BackendPostgres
)

// backends is every backend Each runs a test on, the embedded default
// first.
var backends = []string{Bbolt, Postgres}

// LeaseTTL is the lease a test's ledger holds. The lease runs on the
// database's clock, not the test's, and is never renewed: it must outlast
// the slowest test under -race on a loaded machine.
const LeaseTTL = time.Hour

// openTimeout bounds connecting to the test database and migrating it.
const openTimeout = 30 * time.Second

// Each runs fn as a subtest per backend, named by the backend.
func Each(t *testing.T, fn func(t *testing.T, backend string)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b, func(t *testing.T) { fn(t, b) })
	}
}

// Open opens a fresh ledger of backend for t with opts and closes it when
// t ends: bbolt in a directory of t's, or PostgreSQL in a database of its
// own, its lease held by this ledger (see the package comment). On
// PostgreSQL, a zero opts.SendWindow becomes production's default (a third
// of the default lease TTL), as jobs.OpenLedger sets it from the config.
func Open(t testing.TB, backend string, opts state.Options) *state.DB {
	t.Helper()
	switch backend {
	case Bbolt:
		return OpenBolt(t, t.TempDir(), opts)
	case Postgres:
		return OpenPostgres(t, pgtest.NewDatabase(t), opts)
	}
	t.Fatalf("ledgertest: unknown backend %q (want %s or %s)", backend, Bbolt, Postgres)
	return nil
}

// Configure points cfg's ledger at a fresh ledger of backend, for a test
// that opens it through the config as production does (jobs.Open,
// jobs.OpenLedger): bbolt under cfg.StateDir as it is, or PostgreSQL in a
// database of its own (state.backend: postgres, the DSN set as if read
// from $BATCHD_POSTGRES_DSN). The opener must then take the lease (Lead).
// It returns the DSN, "" on bbolt.
func Configure(t testing.TB, backend string, cfg *config.Config) string {
	t.Helper()
	switch backend {
	case Bbolt:
		cfg.State.Backend = Bbolt
		return ""
	case Postgres:
		dsn := pgtest.NewDatabase(t)
		cfg.State.Backend = Postgres
		cfg.SetPostgresDSN(dsn)
		return dsn
	}
	t.Fatalf("ledgertest: unknown backend %q (want %s or %s)", backend, Bbolt, Postgres)
	return ""
}

// OpenBolt opens (or creates) the bbolt ledger in dir, closed when t ends.
func OpenBolt(t testing.TB, dir string, opts state.Options) *state.DB {
	t.Helper()
	db, err := state.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// OpenPostgres opens the PostgreSQL ledger of dsn, fenced, takes its
// lease (and readies it as a new leader would: TakeOver), and gives the
// lease up and closes the ledger when t ends.
func OpenPostgres(t testing.TB, dsn string, opts state.Options) *state.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	store, err := postgres.Open(ctx, dsn, postgres.Options{Fencing: true})
	if err != nil {
		t.Fatalf("ledgertest: open the test database: %v", err)
	}
	if opts.SendWindow == 0 {
		opts.SendWindow = config.DefaultLeaseTTL / 3
	}
	db, err := state.OpenStore(store, store.Elector(), opts)
	if err != nil {
		store.Close()
		t.Fatalf("ledgertest: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	Lead(t, db)
	return db
}

// Lead takes db's leader lease for the rest of t (LeaseTTL, given up when
// t ends) and readies the ledger as a new leader would, as jobs.HoldLease
// does for a one-shot command. On a bbolt ledger it changes nothing.
func Lead(t testing.TB, db state.Ledger) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	li, err := db.Lead(ctx, LeaseTTL)
	if err != nil {
		t.Fatalf("ledgertest: %v", err)
	}
	if !li.Self {
		t.Fatalf("ledgertest: another instance holds the test ledger's lease (%s)", li)
	}
	if !li.Shared {
		return
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
		defer cancel()
		// A test that closed the ledger itself cannot give the lease up;
		// nothing needs it then: the database is dropped with the test.
		if err := db.Resign(ctx); err != nil {
			t.Logf("ledgertest: the lease was not given up: %v", err)
		}
	})
	if _, err := db.TakeOver(); err != nil {
		t.Fatalf("ledgertest: take over the test ledger: %v", err)
	}
}
