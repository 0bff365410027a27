package main

import (
	"context"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// runRestore is `batchd restore`: install a snapshot made by `batchd
// backup` as the ledger, with batchd stopped. Every row without a check
// on record is put in doubt as of the snapshot's time, so that the next
// submit looks it up before anything is sent: a restore never pays twice.
func runRestore(ctx context.Context, env *environ, cl *cmdLine) error {
	from := cl.String("from", "", "the snapshot to install, made by batchd backup (required)")
	other := cl.Bool("other-instance", false, "install a snapshot of another ledger instance than this state directory's")
	cl.require(func() bool { return *from != "" }, "--from is required")
	cfg, err := cl.config()
	if err != nil {
		return err
	}
	settle := cfg.Submit.ResolveAfter.Std()
	keys, err := jobs.AccountKeys(cfg)
	if err != nil {
		return err
	}
	res, err := state.Restore(cfg.StateDir, *from, state.RestoreOptions{
		AccountKeys:   keys,
		OtherInstance: *other,
		Settle:        settle,
		Wait: func(until time.Time) error {
			d := time.Until(until).Round(time.Second)
			fmt.Fprintf(env.stderr, "batchd restore: the ledger was written less than submit.resolve_after (%s) ago; waiting %s, so that a check made just before batchd stopped shows at the service before the lookups\n", settle, d)
			select {
			case <-time.After(time.Until(until)):
				return nil
			case <-ctx.Done():
				return fmt.Errorf("%w: nothing was changed", errInterrupted)
			}
		},
	})
	if err != nil {
		return err
	}
	m := res.Mark
	fmt.Fprintf(env.stdout, "restored %s from %s, a snapshot taken at %s\n", res.Ledger, m.From, m.SnapshotAt.Format(time.RFC3339))
	if m.Replaced != "" {
		fmt.Fprintf(env.stdout, "the ledger it replaced is kept as %s\n", m.Replaced)
	}
	fmt.Fprintf(env.stdout, "%d rows without a check were put in doubt: the next submit looks each up and sends only those the service does not have\n", m.RowsInDoubt)
	fmt.Fprintf(env.stdout, "new instance id %s (was %s): new batches get labels no lost batch can have carried\n", m.Instance, m.PreviousInstance)
	r := res.Report
	fmt.Fprintf(env.stdout, "checked: OK: %d batches, %d rows (%d submitted, %d in doubt, %d rejected)\n",
		r.Batches, r.Rows, r.ByState[payment.Submitted], r.ByState[payment.InDoubt], r.ByState[payment.Rejected])
	fmt.Fprintln(env.stdout, "next: start batchd (or run `batchd submit`, then `batchd reconcile`); files accepted after the snapshot are not in this ledger: see the next reconcile's exceptions for checks it does not know")
	return nil
}
