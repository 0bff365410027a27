package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/reconcile"
	"github.com/batchd/batchd/internal/state"
)

func runReconcile(ctx context.Context, env *environ, cl *cmdLine) error {
	from := cl.String("from", "", "first creation date to list (default: the oldest check not final, capped at reconcile.lookback_days)")
	to := cl.String("to", "", "last creation date to list (default: today)")
	if err := cl.parse(); err != nil {
		return err
	}
	window, err := reconcile.ParseWindow(*from, *to)
	if err != nil {
		return cl.mistake("--%v", err)
	}
	ctx, cancel := stopOnSignal(ctx, env, nil)
	defer cancel()
	_, _, je, err := openJobs(env, *cl.cfgPath, jobs.Hooks{})
	if errors.Is(err, state.ErrLocked) || errors.Is(err, jobs.ErrNotLeader) {
		// batchd run holds the ledger: its own reconcile job does the run.
		cfg, cerr := cl.load()
		if cerr != nil {
			return cerr
		}
		return reconcileThroughAdmin(ctx, env, cfg, window)
	}
	if err != nil {
		return err
	}
	defer je.Close()
	sum, err := je.Reconcile(ctx, window)
	if sum != nil {
		fmt.Fprintf(env.stdout, "window %s: %d checks seen in %d pages (%d passes, consistent: %v)\n",
			sum.Window, sum.ChecksSeen, sum.PagesRead, sum.Passes, sum.Consistent)
		fmt.Fprintf(env.stdout, "matched %d, status changes %d, resolved %d, unknown %d, missing %d, mismatched %d, stuck %d, in doubt %d, returned %d, voided %d\n",
			sum.Matched, sum.StatusChanges, sum.Resolved, sum.Unknown, sum.Missing, sum.Mismatched, sum.Stuck, sum.InDoubt, sum.Returned, sum.Voided)
		if sum.LostBatch > 0 {
			fmt.Fprintf(env.stdout, "lost batch %d: checks batchd made for batches the ledger lost when its database went back in time; do not void them, see the exceptions report\n", sum.LostBatch)
		}
		for _, in := range sum.Steps {
			fmt.Fprintf(env.stdout, "%s (money coming in: see the %s report)\n", in.Words, in.Name)
		}
		fmt.Fprintln(env.stdout, jobs.CallsLine(sum))
		for _, r := range sum.Reports {
			fmt.Fprintf(env.stdout, "report: %s\n", r)
		}
	}
	if errors.Is(err, payment.ErrLedger) || errors.Is(err, payment.ErrKeyRefused) || ctx.Err() != nil {
		return err
	}
	osum, oerr := je.ReconcileSources(ctx)
	if osum.Read > 0 || oerr != nil {
		fmt.Fprintf(env.stdout, "%s\n", jobs.SourcesReconcileLine(osum))
		for _, r := range osum.Reports {
			fmt.Fprintf(env.stdout, "report: %s\n", r)
		}
	}
	return errors.Join(err, oerr)
}
