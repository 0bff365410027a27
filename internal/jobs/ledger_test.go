package jobs

import (
	"testing"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/pgtest"
)

// TestMain stops the shared PostgreSQL server (pgtest) that the tests run
// on both backends keep their ledgers in.
func TestMain(m *testing.M) { pgtest.Main(m) }

// openEnv opens the jobs' Env of c, on the clock now, with its ledger on
// backend (ledgertest.Configure), through OpenAt as the daemon opens it,
// holding the ledger's lease for the test as a one-shot command does. It
// is closed when t ends.
func openEnv(t *testing.T, backend string, c *config.Config, now func() time.Time) *Env {
	t.Helper()
	ledgertest.Configure(t, backend, c)
	env, err := OpenAt(c, nil, Hooks{}, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	ledgertest.Lead(t, env.DB)
	return env
}
