package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/state"
)

// ErrNotLeader is returned to a one-shot command on a shared ledger that
// another batchd instance leads: only the leader writes the ledger, so
// the command would record nothing (its writes are fenced).
var ErrNotLeader = errors.New("another batchd instance leads the ledger")

// HoldLease takes the ledger's leader lease for a one-shot command
// (ingest, submit, reconcile, …) and keeps it renewed, every third of
// state.lease_ttl, until release is called, which gives it up so that a
// standby daemon takes over at once. On a file ledger the process that
// opened it leads already, and this costs nothing.
//
// When the ledger is shared it first readies it as a new leader would
// (state.Ledger.TakeOver: half-loaded batches discarded, rows left in
// flight put in doubt). When another instance leads, it fails with
// ErrNotLeader, naming it: run the job through that daemon's admin server
// instead, or stop it. A lease lost while the command runs (the database
// unreachable past the lease, the process paused) is logged; the
// ledger's fencing then refuses the command's writes and its send-by
// deadlines stop its creates.
func (e *Env) HoldLease(ctx context.Context) (release func(), err error) {
	return HoldLease(ctx, e.DB, e.Cfg.State.LeaseTTL.Std(), e.Log)
}

// HoldLease is Env.HoldLease for a command that opened the ledger alone
// (jobs.OpenLedger): db, with the lease's ttl, logging to log.
func HoldLease(ctx context.Context, db state.Ledger, ttl time.Duration, log *slog.Logger) (release func(), err error) {
	h := &holder{db: db, log: log}
	li, err := db.Lead(ctx, ttl)
	if err != nil {
		return nil, err
	}
	if !li.Self {
		return nil, fmt.Errorf("%w (%s): run the job through its admin server (POST /v1/jobs/NAME) or stop it first", ErrNotLeader, li)
	}
	if !li.Shared {
		return func() {}, nil
	}
	rep, err := db.TakeOver()
	if err != nil {
		h.resign()
		return nil, err
	}
	if rep.Rewind != nil {
		log.Error(state.LogMessage, rep.Rewind.LogAttrs()...)
	}
	if rep.InDoubt > 0 {
		log.Info("took the ledger's lease for this command", "epoch", li.Epoch, "rows_put_in_doubt", rep.InDoubt)
	}
	renewCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { h.renew(renewCtx, ttl) })
	var once sync.Once
	return func() {
		once.Do(func() {
			stop()
			wg.Wait()
			h.resign()
		})
	}, nil
}

// holder keeps one command's lease.
type holder struct {
	db  state.Ledger
	log *slog.Logger
}

// renew keeps the lease until ctx ends, and says once when it is lost.
func (h *holder) renew(ctx context.Context, ttl time.Duration) {
	log := h.log
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	lost := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		li, err := h.db.Lead(ctx, ttl)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			log.Warn("cannot renew the ledger's lease; if it runs out, this command's writes are refused", "error", err)
		case !li.Self && !lost:
			lost = true
			log.Error("lost the ledger's lease: another instance leads; this command records nothing more", "leader", li.String())
		}
	}
}

func (h *holder) resign() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.db.Resign(ctx); err != nil {
		h.log.Warn("could not give up the ledger's lease; a standby takes over when it runs out", "error", err)
	}
}
