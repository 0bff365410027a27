package doctor

import (
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
)

func TestLedgerBboltMissingIsNotCreated(t *testing.T) {
	cfg := config.Default()
	cfg.StateDir = t.TempDir()
	r := Ledger(cfg)
	if r.Status != Fail || !strings.Contains(r.What, "no ledger") || !strings.Contains(r.Fix, "batchd init") {
		t.Fatalf("%+v", r)
	}
	if _, err := state.CheckLedger(cfg.StateDir); err == nil {
		t.Fatal("the check created a ledger")
	}
}

// A PostgreSQL database without the ledger is reported, and left empty;
// once the ledger is made, it checks OK. The DSN is never shown.
func TestLedgerPostgres(t *testing.T) {
	dsn := pgtest.Start(t)
	cfg := config.Default()
	cfg.StateDir = t.TempDir()
	cfg.State.Backend = config.BackendPostgres
	cfg.SetPostgresDSN(dsn)
	r := Ledger(cfg)
	if r.Status != Fail || !strings.Contains(r.What, "holds no batchd ledger") || !strings.Contains(r.Fix, "batchd init") {
		t.Fatalf("%+v", r)
	}
	if has, err := hasLedgerTables(dsn); err != nil || has {
		t.Fatalf("the check created the ledger's tables (%v, %v)", has, err)
	}
	db, err := jobs.OpenLedger(cfg, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	r = Ledger(cfg)
	if r.Status != OK || !strings.Contains(r.What, "postgres ") || strings.Contains(r.What, dsn) {
		t.Fatalf("%+v", r)
	}
}

func TestScrubHidesTheDSNAndItsPassword(t *testing.T) {
	dsn := "postgres://batchd:s3cretPw@db.example:5432/batchd"
	got := scrub(errTest("connect postgres://batchd:s3cretPw@db.example:5432/batchd: auth s3cretPw failed"), dsn)
	if strings.Contains(got, "s3cretPw") || !strings.Contains(got, "(DSN)") {
		t.Fatal(got)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }
