package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// runRelease is `batchd release --file F --line L`: a person approves a
// row held because its payee's bank account changed (README "Payee
// bank-detail changes"). The row becomes pending, with who released it in
// its history, and the next submit run sends it.
func runRelease(ctx context.Context, env *environ, args []string) error {
	fs := newFlags(env, "release", "--file F --line L [--batch N] [--by NAME] [--config F]")
	cfgPath := configFlag(fs)
	file := fs.String("file", "", "the payment file's name as it was ingested (as batchd status shows it); required")
	line := fs.Int("line", 0, "the held row's line in that file; required")
	batch := fs.Uint64("batch", 0, "the batch, when several ingested files bore that name")
	by := fs.String("by", "", "who approves the change, for the row's history (default: $USER)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *file == "" || *line <= 0 {
		fmt.Fprintln(env.stderr, "batchd release: --file F and --line L are required")
		fs.Usage()
		return errUsage
	}
	who := *by
	if who == "" {
		who = env.getenv("USER")
	}
	if who == "" {
		fmt.Fprintln(env.stderr, "batchd release: say who approves the change with --by NAME")
		return errUsage
	}
	cfg, err := loadConfig(env, *cfgPath)
	if err != nil {
		return err
	}
	db, err := state.Open(cfg.StateDir, state.Options{MustExist: true})
	if err != nil {
		return releaseLockedHint(err)
	}
	defer db.Close()
	k, err := heldRow(db, *file, *line, *batch)
	if err != nil {
		return err
	}
	r, err := db.ApproveHeld(k, who)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "released %s line %d (%s, %s): now %s, sent by the next submit run\n",
		*file, *line, k, r.Payment.Name, r.State)
	return db.Close()
}

// heldRow finds the row at line of the payment batch ingested as file (of
// batch, when given), and refuses, saying why, one that is not held.
func heldRow(db payment.RowReader, file string, line int, batch uint64) (payment.RowKey, error) {
	batches, err := db.Batches()
	if err != nil {
		return payment.RowKey{}, err
	}
	var found []payment.RowKey
	for _, b := range batches {
		if !b.Kind.Payments() || b.File != file || (batch != 0 && b.ID != batch) {
			continue
		}
		k := payment.RowKey{Batch: b.ID, Line: uint32(line)}
		r, err := db.Row(k)
		if errors.Is(err, payment.ErrNotFound) {
			continue
		}
		if err != nil {
			return k, err
		}
		if r.State != payment.Held {
			return k, fmt.Errorf("%s line %d (%s) is %s, not held: there is nothing to release", file, line, k, r.ReportStatus())
		}
		found = append(found, k)
	}
	switch len(found) {
	case 0:
		return payment.RowKey{}, fmt.Errorf("no row at %s line %d: check the file name and line with batchd status", file, line)
	case 1:
		return found[0], nil
	}
	return payment.RowKey{}, fmt.Errorf("%d batches of %s hold a row at line %d (%s and %s): say which with --batch N",
		len(found), file, line, found[0], found[1])
}

// releaseLockedHint says what to do when the daemon holds the ledger.
func releaseLockedHint(err error) error {
	if errors.Is(err, state.ErrLocked) {
		return fmt.Errorf("%w\nbatchd release writes the ledger, which a running batchd holds: stop it (systemctl stop batchd), release, and start it again", err)
	}
	return err
}
