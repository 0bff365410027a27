package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/state/postgres"
)

// Ledger checks the configured ledger the way `batchd check` does, and
// never creates one: a bbolt ledger through state.CheckLedger (which
// opens the file read-only, or checks a snapshot the running batchd
// serves); a PostgreSQL one only when its database already holds the
// ledger's tables, then opened and checked (jobs.OpenPostgresDB).
func Ledger(cfg *config.Config) Result {
	if cfg.State.Backend == config.BackendPostgres {
		return postgresLedger(cfg)
	}
	rep, err := state.CheckLedger(cfg.StateDir)
	if errors.Is(err, state.ErrNoLedger) {
		return fail("ledger", "no ledger in "+cfg.StateDir, "create it once with: batchd init (as the service user)")
	}
	if err != nil {
		return fail("ledger", err.Error(), "run batchd check for the details; make state_dir readable by this user")
	}
	return ledgerResult(rep, "batchd check shows every fault; install the last good snapshot with batchd restore --from SNAPSHOT")
}

func ledgerResult(rep *state.Report, fix string) Result {
	if !rep.OK() {
		return fail("ledger", fmt.Sprintf("%s is damaged: %d fault(s), the first: %s", rep.Path, len(rep.Faults)+rep.More, rep.Faults[0]), fix)
	}
	what := fmt.Sprintf("%s checked: %d batches, %d rows, %d in doubt", rep.Path, rep.Batches, rep.Rows, rep.ByState[payment.InDoubt])
	if rep.Via != "" {
		what += " (through " + rep.Via + ")"
	}
	return ok("ledger", what)
}

// pgTimeout bounds the probe of a PostgreSQL ledger's database.
const pgTimeout = 15 * time.Second

func postgresLedger(cfg *config.Config) Result {
	dsn := cfg.PostgresDSN()
	name := postgres.RedactDSN(dsn)
	has, err := hasLedgerTables(dsn)
	if err != nil {
		return fail("ledger", name+": "+scrub(err, dsn), "check state.postgres_dsn_file, that the database is up and reachable, and its pg_hba.conf")
	}
	if !has {
		return fail("ledger", name+" holds no batchd ledger", "create it once with: batchd init, or copy a bbolt ledger in with: batchd migrate-state")
	}
	db, err := jobs.OpenPostgresDB(cfg, state.Options{})
	if err != nil {
		return fail("ledger", scrub(err, dsn), "check the database's state; batchd check shows the same")
	}
	defer db.Close()
	rep, err := db.Check()
	if err != nil {
		return fail("ledger", scrub(err, dsn), "check the database's state; batchd check shows the same")
	}
	return ledgerResult(rep, "batchd check shows every fault; restore the database's last good backup, then batchd mark-restored --at TIME")
}

// hasLedgerTables reports whether the database holds the ledger's table,
// by one read-only query, so that an empty database is reported, not
// given a new ledger.
func hasLedgerTables(dsn string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	var has bool
	err = conn.QueryRow(ctx, "SELECT to_regclass('kv_buckets') IS NOT NULL").Scan(&has)
	return has, err
}

// scrub is err's text without the DSN or its password.
func scrub(err error, dsn string) string {
	msg := err.Error()
	if dsn != "" {
		msg = strings.ReplaceAll(msg, dsn, "(DSN)")
	}
	if c, perr := pgconn.ParseConfig(dsn); perr == nil && c.Password != "" {
		msg = strings.ReplaceAll(msg, c.Password, "(password)")
	}
	return msg
}
