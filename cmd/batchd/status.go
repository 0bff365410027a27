package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

func runStatus(ctx context.Context, env *environ, args []string) error {
	fs := newFlags(env, "status", "[--config F] [--json]")
	cfgPath := configFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig(env, *cfgPath)
	if err != nil {
		return err
	}
	db, err := jobs.OpenLedger(cfg, state.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	st, err := jobs.StatusOf(db)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	if st.Restored != nil {
		fmt.Fprintf(env.stdout, "ledger %s\n\n", st.Restored)
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BATCH\tKIND\tFILE\tSTATUS\tROWS\tINVALID\tPENDING\tIN_FLIGHT\tIN_DOUBT\tSUBMITTED\tREJECTED\tRESULTS")
	for _, b := range st.Batches {
		results := "-"
		if b.ResultsReported != nil {
			results = b.ResultsReported.Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", b.ID, b.Kind, b.File, b.Status, b.Rows, b.Invalid,
			b.ByState[payment.Pending], b.ByState[payment.InFlight], b.ByState[payment.InDoubt], b.ByState[payment.Submitted], b.ByState[payment.Rejected], results)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printHeld(env, db)
}

// printHeld lists the rows held for a changed payee account, each with
// its change (masked) and the command that releases it.
func printHeld(env *environ, db payment.RowReader) error {
	return db.OpenRows(func(r *payment.Row) (bool, error) {
		if r.State == payment.Held {
			_, err := fmt.Fprintf(env.stdout, "%s: %s\n", r.Key, r.Error)
			return err == nil, err
		}
		return true, nil
	})
}
