package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/reconcile"
)

func runReconcile(ctx context.Context, env *environ, args []string) error {
	fs := newFlags(env, "reconcile", "[--config F] [--from YYYY-MM-DD --to YYYY-MM-DD]")
	cfgPath := configFlag(fs)
	from := fs.String("from", "", "first creation date to list (default: the oldest check not final, capped at reconcile.lookback_days)")
	to := fs.String("to", "", "last creation date to list (default: today)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	_, _, je, err := openJobs(env, *cfgPath, jobs.Hooks{})
	if err != nil {
		return err
	}
	defer je.Close()
	var window *reconcile.Window
	if *from != "" || *to != "" {
		w, err := parseWindow(env, *from, *to)
		if err != nil {
			return err
		}
		window = &w
	}
	ctx, cancel := stopOnSignal(ctx, env, nil)
	defer cancel()
	sum, err := je.Reconcile(ctx, window)
	if sum != nil {
		fmt.Fprintf(env.stdout, "window %s: %d checks seen in %d pages (%d passes, consistent: %v)\n",
			sum.Window, sum.ChecksSeen, sum.PagesRead, sum.Passes, sum.Consistent)
		fmt.Fprintf(env.stdout, "matched %d, status changes %d, resolved %d, unknown %d, missing %d, mismatched %d, stuck %d, in doubt %d, returned %d, voided %d\n",
			sum.Matched, sum.StatusChanges, sum.Resolved, sum.Unknown, sum.Missing, sum.Mismatched, sum.Stuck, sum.InDoubt, sum.Returned, sum.Voided)
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

// parseWindow reads --from/--to; both are needed when either is given.
func parseWindow(env *environ, from, to string) (reconcile.Window, error) {
	f, err := reconcile.ParseDate(from)
	if err != nil {
		fmt.Fprintf(env.stderr, "batchd reconcile: --from: %v\n", err)
		return reconcile.Window{}, errUsage
	}
	t, err := reconcile.ParseDate(to)
	if err != nil {
		fmt.Fprintf(env.stderr, "batchd reconcile: --to: %v\n", err)
		return reconcile.Window{}, errUsage
	}
	return reconcile.Window{From: f, To: t}, nil
}
