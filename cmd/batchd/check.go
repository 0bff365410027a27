package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// errDamaged is `batchd check`'s verdict on a ledger with faults.
var errDamaged = errors.New("the ledger is damaged: keep the file, and install the last good snapshot with `batchd restore --from SNAPSHOT`")

// runCheck is `batchd check`: bbolt's consistency check and batchd's
// invariants, on the configured ledger (through a snapshot when a batchd
// holds it) or on any copy of one (--file). Exit 1 on any fault.
func runCheck(ctx context.Context, env *environ, args []string) error {
	fs := newFlags(env, "check", "[--config F | --file PATH] [--json]")
	cfgPath := configFlag(fs)
	file := fs.String("file", "", "check this ledger or snapshot file instead of the configured ledger")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var (
		rep *state.Report
		err error
	)
	if *file != "" {
		rep, err = state.CheckFile(*file)
	} else {
		cfg, cerr := loadConfig(env, *cfgPath)
		if cerr != nil {
			return cerr
		}
		rep, err = state.CheckLedger(cfg.StateDir)
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
		return errDamaged
	}
	return nil
}

func printReport(env *environ, r *state.Report) {
	w := env.stdout
	fmt.Fprintf(w, "ledger %s (%d bytes)\n", r.Path, r.Size)
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
