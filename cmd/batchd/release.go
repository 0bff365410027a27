package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/state"
)

// runRelease is `batchd release --file F --line L`: a person approves a
// row held because its payee's bank account changed (README "Payee
// bank-detail changes"). The row becomes pending, with who released it in
// its history, and the next submit run sends it. When a running batchd
// holds the ledger, the release goes through its admin server instead
// (POST /v1/release), so nobody stops the daemon to approve a payment.
func runRelease(ctx context.Context, env *environ, cl *cmdLine) error {
	file := cl.String("file", "", "the payment file's name as it was ingested (as batchd status shows it); required")
	line := cl.Int("line", 0, "the held row's line in that file; required")
	batch := cl.Uint64("batch", 0, "the batch, when several ingested files bore that name")
	by := cl.String("by", "", "who approves the change, for the row's history (default: $USER)")
	cl.require(func() bool { return *file != "" && *line > 0 }, "--file F and --line L are required")
	if err := cl.parse(); err != nil {
		return err
	}
	who := cmp.Or(*by, env.getenv("USER"))
	if who == "" {
		return cl.mistake("say who approves the change with --by NAME")
	}
	cfg, err := cl.load()
	if err != nil {
		return err
	}
	req := jobs.ReleaseRequest{File: *file, Line: *line, Batch: *batch, By: who}
	msg, err := releaseInLedger(cfg, req)
	if errors.Is(err, state.ErrLocked) || errors.Is(err, jobs.ErrNotLeader) {
		msg, err = releaseThroughAdmin(ctx, cfg, req)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(env.stdout, msg)
	return nil
}

// releaseInLedger releases in the ledger when no batchd holds it (a
// file's lock, or a shared ledger's lease: ErrLocked or ErrNotLeader).
func releaseInLedger(cfg *config.Config, req jobs.ReleaseRequest) (string, error) {
	db, err := jobs.OpenLedger(cfg, state.Options{MustExist: true})
	if err != nil {
		return "", err
	}
	defer db.Close()
	release, err := jobs.HoldLease(context.Background(), db, cfg.State.LeaseTTL.Std(), slog.New(slog.DiscardHandler))
	if err != nil {
		return "", err
	}
	defer release()
	msg, err := jobs.Release(db, req)
	if err != nil {
		return "", err
	}
	return msg, db.Close()
}
