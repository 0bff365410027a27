package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

func runStatus(ctx context.Context, env *environ, cl *cmdLine) error {
	asJSON := cl.Bool("json", false, "print JSON instead of a table")
	cfg, err := cl.config()
	if err != nil {
		return err
	}
	var st jobs.Status
	var held func(io.Writer) error
	db, err := jobs.OpenLedger(cfg, state.Options{})
	switch {
	case errors.Is(err, state.ErrLocked):
		// batchd run holds the file: it answers for its ledger.
		c, cerr := newAdminClient(cfg, "status", "")
		if cerr != nil {
			return cerr
		}
		if _, err := c.do(ctx, http.MethodGet, "/v1/status", nil, &st); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		defer db.Close()
		if st, err = jobs.StatusWithChecks(db); err != nil {
			return err
		}
		held = func(w io.Writer) error { return printHeld(w, db) }
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	if err := printStatus(env.stdout, st); err != nil {
		return err
	}
	if held == nil {
		fmt.Fprintln(env.stdout, "(read from the running batchd; rows held for a changed payee are listed by `batchd status` when batchd is stopped, and in the daemon's log)")
		return nil
	}
	return held(env.stdout)
}

// printStatus is the status table: each batch's rows by state, then how
// its payments ended (each check status with its count and amount), a
// batch whose every row is final shown "finished", and a refused file
// with its reason.
func printStatus(w io.Writer, st jobs.Status) error {
	if st.Restored != nil {
		fmt.Fprintf(w, "ledger %s\n\n", st.Restored)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BATCH\tKIND\tFILE\tSTATUS\tROWS\tINVALID\tPENDING\tIN_FLIGHT\tIN_DOUBT\tSUBMITTED\tREJECTED\tRESULTS\tCHECKS")
	for _, b := range st.Batches {
		results := "-"
		if b.ResultsReported != nil {
			results = b.ResultsReported.Format("2006-01-02 15:04")
		}
		status := string(b.Status)
		if b.Finished {
			status = "finished"
		}
		checks := checksLine(b.Checks)
		if b.Status == payment.BatchRejected && b.Note != "" {
			checks = "refused: " + b.Note
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", b.ID, b.Kind, b.File, status, b.Rows, b.Invalid,
			b.ByState[payment.Pending], b.ByState[payment.InFlight], b.ByState[payment.InDoubt], b.ByState[payment.Submitted], b.ByState[payment.Rejected],
			results, checks)
	}
	return tw.Flush()
}

// checksLine says how a batch's payments stand, by check status, each
// with its count and amount: "deposited 4 4375.50, failed 1 50.00".
func checksLine(checks map[payment.Status]jobs.Total) string {
	if len(checks) == 0 {
		return "-"
	}
	names := make([]payment.Status, 0, len(checks))
	for s := range checks {
		names = append(names, s)
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, s := range names {
		parts = append(parts, fmt.Sprintf("%s %d %s", s, checks[s].Count, checks[s].Amount))
	}
	return strings.Join(parts, ", ")
}

// printHeld lists the rows held for a changed payee account, each with
// its change (masked) and the command that releases it.
func printHeld(w io.Writer, db payment.RowReader) error {
	return db.OpenRows(func(r *payment.Row) (bool, error) {
		if r.State == payment.Held {
			_, err := fmt.Fprintf(w, "%s: %s\n", r.Key, r.Error)
			return err == nil, err
		}
		return true, nil
	})
}
