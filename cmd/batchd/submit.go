package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/onboard"
	"github.com/batchd/batchd/internal/payment"
)

func runSubmit(ctx context.Context, env *environ, cl *cmdLine) error {
	maxDur := cl.Duration("max-duration", 0, "stop gracefully after this long (0 = until done)")
	if err := cl.parse(); err != nil {
		return err
	}
	cfg, log, je, err := openJobs(env, *cl.cfgPath, jobs.Hooks{})
	if err != nil {
		return err
	}
	defer je.Close()

	ctx, cancel := stopOnSignal(ctx, env, func(sig os.Signal) {
		log.Warn("stopping: no new creates; requests in flight finish (a second signal exits at once)", "signal", sig.String())
	})
	defer cancel()
	ctx, cancelMax := withMaxDuration(ctx, *maxDur)
	defer cancelMax()

	run := je.Submitter()
	total, err := run.OpenCount()
	if err != nil {
		return err
	}
	progCtx, stopProgress := context.WithCancel(context.Background())
	progDone := make(chan struct{})
	go func() {
		defer close(progDone)
		run.ShowProgress(progCtx, env.stderr, isTerminal(env.stderr), cfg.Submit.ProgressInterval.Std(), total)
	}()
	sum, runErr := run.Run(ctx)
	stopProgress()
	<-progDone

	var delivered []string
	if jobs.CanDeliver(runErr) {
		var derr error
		delivered, derr = je.DeliverResults(context.WithoutCancel(ctx))
		runErr = errors.Join(runErr, derr)
	}
	fmt.Fprintf(env.stdout, "created %d, rejected %d, voided %d, in doubt %d, pending %d, creates sent %d\n",
		sum.Created, sum.Rejected, sum.Voided, sum.InDoubt, sum.Pending, sum.Attempts)
	if sum.Held > 0 {
		fmt.Fprintf(env.stdout, "held %d: a payee's bank account changed; see batchd status, release with batchd release\n", sum.Held)
	}
	// Funding-source rows follow the payments under the same limiter,
	// unless the run was stopped or the ledger or the key failed.
	if !errors.Is(runErr, payment.ErrKeyRefused) && jobs.CanDeliver(runErr) {
		osum, more, oerr := je.Onboard(ctx)
		if osum != (onboard.Summary{}) || oerr != nil {
			fmt.Fprintf(env.stdout, "funding sources: %s\n", jobs.SourcesLine(osum))
			log.Info("onboarding finished", "customers_created", osum.Customers, "sources_created", osum.Created,
				"verified", osum.Verified, "rejected", osum.Rejected, "micro_deposits_sent", osum.Initiated,
				"bank_linking_needed", osum.BankLink, "in_doubt", osum.InDoubt, "pending", osum.Pending, "calls", osum.Calls)
		}
		delivered = append(delivered, more...)
		runErr = errors.Join(runErr, oerr)
	}
	for _, name := range delivered {
		fmt.Fprintf(env.stdout, "results report: %s\n", name)
	}
	log.Info("submit finished", "created", sum.Created, "rejected", sum.Rejected, "voided", sum.Voided,
		"resent_after_lookup", sum.Resent, "in_doubt", sum.InDoubt, "pending", sum.Pending,
		"held", sum.Held, "creates_sent", sum.Attempts, "recovered_in_flight", sum.Recovered)
	if errors.Is(runErr, context.Canceled) || errors.Is(runErr, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %d rows left pending, %d in doubt; run submit again to continue", errInterrupted, sum.Pending, sum.InDoubt)
	}
	return runErr
}
