package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	r, _ := checkLedger(cfg)
	return r
}

// checkLedger is Ledger, with the report of a ledger that could be
// checked (nil otherwise), for the account key check.
func checkLedger(cfg *config.Config) (Result, *state.Report) {
	if cfg.State.Backend == config.BackendPostgres {
		return postgresLedger(cfg)
	}
	rep, err := state.CheckLedger(cfg.StateDir)
	if errors.Is(err, state.ErrNoLedger) {
		return fail("ledger", "no ledger in "+cfg.StateDir, "create it once with: batchd init (as the service user)"), nil
	}
	if err != nil {
		return fail("ledger", err.Error(), "run batchd check for the details; make state_dir readable by this user"), nil
	}
	return ledgerResult(rep, "batchd check shows every fault; install the last good snapshot with batchd restore --from SNAPSHOT"), rep
}

// AccountKeys checks that this host's key ring holds the key the ledger
// rep describes seals its new rows with: a host without it does not
// lead (`batchd run` refuses the lease), and says so here with the fix.
// Without a report (the ledger could not be checked) it says nothing.
func AccountKeys(cfg *config.Config, rep *state.Report) []Result {
	if rep == nil {
		return nil
	}
	path := jobs.AccountKeysPath(cfg)
	ring, err := jobs.ReadAccountKeys(cfg)
	if errors.Is(err, fs.ErrNotExist) && rep.AccountKey == 0 && cfg.State.Backend != config.BackendPostgres {
		return []Result{warn("account-keys", "no key ring "+path+" yet", "batchd makes it when it next opens the ledger (batchd init does); then back it up apart from the ledger")}
	}
	if err != nil {
		return []Result{fail("account-keys", err.Error(), "restore the key ring file from its backup, or copy it from the host that leads (mode 0600)")}
	}
	if err := state.RingHoldsSealingKey(ring, rep.AccountKey); err != nil {
		what, fix := splitFix(err.Error())
		return []Result{fail("account-keys", path+": "+what, fix)}
	}
	what := fmt.Sprintf("%s holds %d key(s)", path, len(ring.IDs()))
	if rep.AccountKey != 0 {
		what += fmt.Sprintf(", the ledger's account key %d among them", rep.AccountKey)
	}
	return []Result{ok("account-keys", what)}
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

func postgresLedger(cfg *config.Config) (Result, *state.Report) {
	dsn := cfg.PostgresDSN()
	name := postgres.RedactDSN(dsn)
	has, err := hasLedgerTables(dsn)
	if err != nil {
		return fail("ledger", name+": "+scrub(err, dsn), "check state.postgres_dsn_file, that the database is up and reachable, and its pg_hba.conf"), nil
	}
	if !has {
		return fail("ledger", name+" holds no batchd ledger", "create it once with: batchd init, or copy a bbolt ledger in with: batchd migrate-state"), nil
	}
	db, err := jobs.OpenPostgresDB(cfg, state.Options{})
	if err != nil {
		return fail("ledger", scrub(err, dsn), "check the database's state; batchd check shows the same"), nil
	}
	defer db.Close()
	rep, err := db.Check()
	if err != nil {
		return fail("ledger", scrub(err, dsn), "check the database's state; batchd check shows the same"), nil
	}
	return ledgerResult(rep, "batchd check shows every fault; restore the database's last good backup, then batchd mark-restored --at TIME"), rep
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
