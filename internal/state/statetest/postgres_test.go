package statetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/state/postgres"
	"github.com/batchd/batchd/internal/state/statetest"
)

// TestMain stops the shared PostgreSQL server (pgtest) after the tests.
func TestMain(m *testing.M) { pgtest.Main(m) }

// TestPostgres runs the conformance suite on the PostgreSQL ledger, each
// test in a fresh database of one private server.
func TestPostgres(t *testing.T) {
	statetest.Run(t, statetest.Backend{Name: "postgres", New: newPostgresLedger,
		NoRestore: "its backups are the operator's (pg_dump, point-in-time recovery), and the ledger cannot yet be told its database went back in time (issue 19, build item 6)"})
}

// postgresLedger is a ledger in a database of its own.
type postgresLedger struct{ dsn string }

func newPostgresLedger(t testing.TB) statetest.Ledger {
	return &postgresLedger{dsn: pgtest.NewDatabase(t)}
}

func (l *postgresLedger) Open(t testing.TB, opts state.Options) *state.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := postgres.Open(ctx, l.dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := state.OpenStore(store, elector{store}, opts)
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// Snapshot and Restore are never called: see NoRestore.
func (l *postgresLedger) Snapshot(t testing.TB, _ *state.DB) statetest.Snapshot {
	t.Fatal("postgres: no snapshots")
	return nil
}

func (l *postgresLedger) Restore(t testing.TB, _ statetest.Snapshot, _ time.Time) *state.RestoreMark {
	t.Fatal("postgres: no restore")
	return nil
}

// elector gives the ledger the store's leader lease (state.Elector).
type elector struct{ s *postgres.Store }

func (e elector) TryLead(ctx context.Context, holder string, ttl time.Duration) (state.LeaderInfo, error) {
	li, err := e.s.TryLead(ctx, holder, ttl)
	return leaderInfo(li), err
}

func (e elector) Leader(ctx context.Context) (state.LeaderInfo, error) {
	li, err := e.s.Leader(ctx)
	return leaderInfo(li), err
}

func (e elector) Resign(ctx context.Context) error { return e.s.Resign(ctx) }

func leaderInfo(li postgres.LeaderInfo) state.LeaderInfo {
	return state.LeaderInfo{Holder: li.Holder, Epoch: li.Epoch, Expires: li.Expires, Self: li.Self}
}
