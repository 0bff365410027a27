package jobs

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
)

const openPassword = "s3cret-Pw_77"

// TestOpenLedgerBbolt: the default backend is the file under state_dir.
func TestOpenLedgerBbolt(t *testing.T) {
	cfg := config.Default()
	cfg.StateDir = t.TempDir()
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	db, err := OpenLedger(cfg, state.Options{Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !strings.HasPrefix(db.Path(), cfg.StateDir) || db.Instance() == "" {
		t.Fatalf("bbolt ledger at %q, instance %q", db.Path(), db.Instance())
	}
}

// TestOpenLedgerPostgresErrors: a PostgreSQL ledger that cannot be opened
// is an error that never prints the DSN or its password, and no ledger
// is made in state_dir instead.
func TestOpenLedgerPostgresErrors(t *testing.T) {
	for _, dsn := range []string{
		"",
		"postgres://batchd:" + openPassword + "@127.0.0.1:1/batchd?connect_timeout=2",
		"host=127.0.0.1 port=1 user=batchd password=" + openPassword + " dbname=batchd connect_timeout=2",
		"postgres://batchd:" + openPassword + "@[::1/x", // does not parse
	} {
		cfg := config.Default()
		cfg.StateDir = t.TempDir()
		cfg.State.Backend = config.BackendPostgres
		cfg.SetPostgresDSN(dsn)
		db, err := OpenLedger(cfg, state.Options{})
		if err == nil {
			db.Close()
			t.Fatalf("opened a ledger on %q", dsn)
		}
		if strings.Contains(err.Error(), openPassword) || dsn != "" && strings.Contains(err.Error(), dsn) {
			t.Errorf("the error prints the DSN: %v", err)
		}
		if dsn == "" && !strings.Contains(err.Error(), config.EnvPostgresDSN) {
			t.Errorf("no DSN: %v", err)
		}
		if ents, _ := os.ReadDir(cfg.StateDir); len(ents) != 0 {
			t.Errorf("a postgres open left %v in state_dir", ents)
		}
	}
}

func TestScrubDSN(t *testing.T) {
	url := "postgres://batchd:" + openPassword + "@db:5432/batchd"
	kv := "host=db user=batchd password='" + openPassword + "' dbname=batchd"
	cause := errors.New("cause")
	for _, dsn := range []string{url, kv} {
		err := scrubDSN(errors.Join(errors.New("dial "+dsn+" as "+openPassword), cause), dsn)
		if strings.Contains(err.Error(), openPassword) || !errors.Is(err, cause) {
			t.Errorf("scrubbed %q: %v", dsn, err)
		}
	}
	if plain := errors.New("connection refused"); scrubDSN(plain, url) != plain {
		t.Error("an error without the DSN was rewrapped")
	}
}

// TestOpenLedgerPostgres: with state.backend postgres the jobs' ledger is
// the database (named without its password), it keeps what is recorded
// across a reopen, and the scheduled backup fails saying how such a
// ledger is backed up, never a silent skip.
func TestOpenLedgerPostgres(t *testing.T) {
	cfg := config.Default()
	cfg.StateDir = t.TempDir()
	cfg.State.Backend = config.BackendPostgres
	cfg.SetPostgresDSN(pgtest.Start(t))
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { return at }

	db, err := OpenLedger(cfg, state.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(db.Path(), "password") || !strings.Contains(db.Path(), "postgres") {
		t.Errorf("ledger named %q", db.Path())
	}
	// Fenced from the start: nothing is recorded before the lease is held.
	if err := db.RecordSuccess("reconcile", at); err == nil {
		t.Fatal("a write without the leader lease was recorded")
	}
	release, err := HoldLease(context.Background(), db, cfg.State.LeaseTTL.Std(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RecordSuccess("reconcile", at); err != nil {
		t.Fatal(err)
	}
	release()
	env := &Env{Cfg: cfg, DB: db, now: now}
	if _, err := env.Backup(context.Background()); !errors.Is(err, state.ErrUnsupported) || !strings.Contains(err.Error(), "pg_dump") {
		t.Errorf("backup of a PostgreSQL ledger: %v", err)
	}
	instance := db.Instance()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = OpenLedger(cfg, state.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	last, ok, err := db.LastSuccess("reconcile")
	if err != nil || !ok || !last.Equal(at) || db.Instance() != instance {
		t.Fatalf("reopened: last success %v %v %v, instance %q (was %q)", last, ok, err, db.Instance(), instance)
	}
	// Only the backup's folder (made before the backup was refused) and
	// this host's watermark of the shared ledger.
	ents, _ := os.ReadDir(cfg.StateDir)
	for _, e := range ents {
		if e.Name() != "backups" && e.Name() != WatermarkName {
			t.Errorf("a postgres ledger left %s in state_dir", e.Name())
		}
	}
}
