package ledgertest_test

import (
	"context"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var at = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// TestEachOpensAWritableLedger: Each runs the body once per backend, and
// Open's ledger takes writes on both (on PostgreSQL, the lease held).
func TestEachOpensAWritableLedger(t *testing.T) {
	var ran []string
	ledgertest.Each(t, func(t *testing.T, backend string) {
		ran = append(ran, backend)
		db := ledgertest.Open(t, backend, state.Options{Now: func() time.Time { return at }})
		if err := db.RecordSuccess("reconcile", at); err != nil {
			t.Fatal(err)
		}
		li, err := db.Leader(context.Background())
		if err != nil || !li.Self || li.Shared != (backend == ledgertest.Postgres) {
			t.Fatalf("leader %+v, %v", li, err)
		}
	})
	if len(ran) != 2 || ran[0] != ledgertest.Bbolt || ran[1] != ledgertest.Postgres {
		t.Fatalf("ran on %v", ran)
	}
}

// TestPostgresIsFenced: the PostgreSQL ledger is opened as production
// opens it, fenced: once it gives its lease up it records nothing more.
func TestPostgresIsFenced(t *testing.T) {
	db := ledgertest.Open(t, ledgertest.Postgres, state.Options{})
	if err := db.RecordSuccess("ingest", at); err != nil {
		t.Fatal(err)
	}
	if err := db.Resign(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordSuccess("ingest", at.Add(time.Hour)); err == nil {
		t.Fatal("a ledger without the lease recorded a write")
	}
	if last, ok, err := db.LastSuccess("ingest"); err != nil || !ok || !last.Equal(at) {
		t.Fatalf("last success %v %v %v", last, ok, err)
	}
}

// TestConfigurePointsAtAFreshDatabase: Configure sets the backend and,
// for PostgreSQL, a DSN of its own.
func TestConfigurePointsAtAFreshDatabase(t *testing.T) {
	c := config.Default()
	if dsn := ledgertest.Configure(t, ledgertest.Postgres, c); dsn == "" || c.PostgresDSN() != dsn || c.State.Backend != config.BackendPostgres {
		t.Fatalf("configured %q, backend %q", dsn, c.State.Backend)
	}
	if dsn := ledgertest.Configure(t, ledgertest.Bbolt, c); dsn != "" || c.State.Backend != config.BackendBbolt {
		t.Fatalf("configured %q, backend %q", dsn, c.State.Backend)
	}
}
