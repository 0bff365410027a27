package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/state/postgres"
)

// chaosLedger is where a chaos run keeps its ledger: the bbolt file in
// stateDir, or, when dsn is set, a PostgreSQL database every process of
// the run opens through $BATCHD_POSTGRES_DSN (state_dir then holds only
// the instance's files, such as its watermark).
type chaosLedger struct {
	stateDir string
	dsn      string
	// keys is the PostgreSQL runs' key ring file (state.account_keys_file,
	// required with that backend), shared by every process of the run.
	keys string
}

// onPostgres is l with its ledger in the database dsn, whose processes
// share a key ring made in dir.
func (l chaosLedger) onPostgres(t *testing.T, dsn, dir string) chaosLedger {
	l.dsn, l.keys = dsn, pgKeyRing(t, dir)
	return l
}

// pgKeyRing makes a key ring file in dir for the instances of a
// PostgreSQL ledger (state.account_keys_file, required with that
// backend, the same ring on every instance) and returns its path.
func pgKeyRing(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "pg-account-keys")
	if _, _, err := acctseal.LoadOrCreate(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// chaosLease is the PostgreSQL runs' state.lease_ttl, the shortest
// allowed: a SIGKILLed one-shot command keeps the lease until it runs
// out, and the next one is refused until then (it cannot tell its
// predecessor is gone), so each kill costs up to this long.
const chaosLease = config.MinLeaseTTL

// config is the run's batchd.yaml lines for the ledger: none for bbolt;
// for PostgreSQL the backend, the lease, and no scheduled backup (a
// PostgreSQL ledger is backed up by the database's own tools).
func (l chaosLedger) config() string {
	if l.dsn == "" {
		return ""
	}
	return fmt.Sprintf("state: {backend: postgres, lease_ttl: %s, account_keys_file: %s}\nbackup: {schedule: \"\"}\n", chaosLease, l.keys)
}

// env is the environment a batchd process of the run needs for the ledger.
func (l chaosLedger) env() []string {
	if l.dsn == "" {
		return nil
	}
	return []string{config.EnvPostgresDSN + "=" + l.dsn}
}

// open opens the ledger in the test's process; no batchd may be writing
// it (a bbolt file is locked by its opener).
func (l chaosLedger) open(t *testing.T) *state.DB {
	t.Helper()
	var db *state.DB
	var err error
	if l.dsn == "" {
		db, err = state.Open(l.stateDir, state.Options{})
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, err = postgres.OpenLedger(ctx, l.dsn, postgres.Options{}, state.Options{AccountKeysFile: l.keys})
	}
	if err != nil {
		t.Fatalf("open the chaos ledger: %v", err)
	}
	return db
}

// afterKill is called once a batchd process of the run was SIGKILLed: it
// counts the rows in flight and submitted and, on PostgreSQL, polls the
// lease until the killed command's has run out, so that the next
// one-shot command is not refused as a second leader.
func (l chaosLedger) afterKill(t *testing.T) (inFlight, submitted int) {
	t.Helper()
	db := l.open(t)
	defer db.Close()
	if l.dsn != "" {
		waitLeaseFree(t, db)
	}
	return ledgerCounts(t, db)
}

// waitLeaseFree polls db's lease until no instance holds it: a SIGKILLed
// command's runs out after its TTL (chaosLease at most).
func waitLeaseFree(t *testing.T, db *state.DB) {
	t.Helper()
	start := time.Now()
	eventually(t, "the killed command's lease running out", 3*chaosLease, func() bool {
		li, err := db.Leader(context.Background())
		if err != nil {
			t.Fatalf("read the lease: %v", err)
		}
		return li.Holder == ""
	})
	t.Logf("the lease was free %v after the kill", time.Since(start).Round(time.Millisecond))
}

// ledgerCounts counts db's rows in flight and submitted.
func ledgerCounts(t *testing.T, db *state.DB) (inFlight, submitted int) {
	t.Helper()
	bs, err := db.Batches()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		inFlight += b.Counts[payment.InFlight]
		submitted += b.Counts[payment.Submitted]
	}
	return inFlight, submitted
}
