package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// errDamaged is `batchd check`'s verdict on a ledger with faults.
var errDamaged = errors.New("the ledger is damaged: keep the file, and install the last good snapshot with `batchd restore --from SNAPSHOT`")

// errDamagedDB is the verdict on a PostgreSQL ledger with faults.
var errDamagedDB = errors.New("the ledger is damaged: keep the database as it is for diagnosis, restore the last good backup with the database's tools (pg_dump, point-in-time recovery), then run `batchd mark-restored --at TIME`")

// runCheck is `batchd check`: bbolt's consistency check and batchd's
// invariants, on the configured ledger (through a snapshot when a batchd
// holds it) or on any copy of one (--file); on a PostgreSQL ledger
// (state.backend: postgres), batchd's invariants and the typed tables'
// agreement with the keys. Exit 1 on any fault.
func runCheck(ctx context.Context, env *environ, cl *cmdLine) error {
	file := cl.String("file", "", "check this ledger or snapshot file instead of the configured ledger")
	asJSON := cl.Bool("json", false, "print the report as JSON")
	if err := cl.parse(); err != nil {
		return err
	}
	var (
		rep     *state.Report
		err     error
		damaged = errDamaged
	)
	if *file != "" {
		rep, err = state.CheckFile(*file)
	} else {
		cfg, cerr := cl.load()
		if cerr != nil {
			return cerr
		}
		rep, err = checkConfigured(cfg)
		if cfg.State.Backend == config.BackendPostgres {
			damaged = errDamagedDB
		}
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printReport(env, rep)
	}
	if !rep.OK() {
		return damaged
	}
	return nil
}

// checkConfigured checks the ledger the config names: the bbolt file
// and its marker, or the PostgreSQL database's invariants (no file to
// check there; the database checks its own pages).
func checkConfigured(cfg *config.Config) (*state.Report, error) {
	if cfg.State.Backend != config.BackendPostgres {
		return state.CheckLedger(cfg.StateDir)
	}
	db, err := jobs.OpenPostgresDB(cfg, state.Options{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rep, err := db.Check()
	if err != nil {
		return nil, err
	}
	rep.Instance = db.Instance()
	return rep, checkTables(cfg, rep)
}

// checkTables adds to rep where the PostgreSQL ledger's typed tables
// (docs/ops-sql.md) disagree with its keys: a row missing, stray or
// different, written outside batchd or by a bug.
func checkTables(cfg *config.Config, rep *state.Report) error {
	store, err := jobs.OpenPostgresStore(cfg.PostgresDSN(), false, cfg.State.LeaseTTL.Std())
	if err != nil {
		return err
	}
	defer store.Close()
	found, err := store.CheckTables(context.Background())
	for _, f := range found {
		rep.Faults = append(rep.Faults, state.Fault{Where: f.Where, What: f.What})
	}
	return err
}

func printReport(env *environ, r *state.Report) {
	w := env.stdout
	if strings.HasPrefix(r.Path, "postgres ") { // a database, not a file
		fmt.Fprintf(w, "ledger %s\n", r.Path)
	} else {
		fmt.Fprintf(w, "ledger %s (%d bytes)\n", r.Path, r.Size)
	}
	if r.Via != "" {
		fmt.Fprintf(w, "checked through %s\n", r.Via)
	}
	if r.Instance != "" {
		fmt.Fprintf(w, "instance %s\n", r.Instance)
	}
	if !r.SnapshotAt.IsZero() {
		fmt.Fprintf(w, "a snapshot taken at %s (install it with batchd restore)\n", r.SnapshotAt.Format(time.RFC3339))
	}
	if r.Restored != nil {
		fmt.Fprintf(w, "%s\n", r.Restored)
	}
	if r.OK() || r.Rows > 0 {
		fmt.Fprintf(w, "%d batches, %d rows (pending %d, in flight %d, in doubt %d, submitted %d, rejected %d), %d checks\n",
			r.Batches, r.Rows, r.ByState[payment.Pending], r.ByState[payment.InFlight], r.ByState[payment.InDoubt],
			r.ByState[payment.Submitted], r.ByState[payment.Rejected], r.Checks)
	}
	printInClear(w, r)
	if r.OK() {
		fmt.Fprintln(w, "verdict: OK")
		return
	}
	fmt.Fprintf(w, "verdict: DAMAGED: %d fault(s)\n", len(r.Faults)+r.More)
	for _, f := range r.Faults {
		fmt.Fprintf(w, "  - %s\n", f)
	}
	if r.More > 0 {
		fmt.Fprintf(w, "  … and %d more\n", r.More)
	}
}
