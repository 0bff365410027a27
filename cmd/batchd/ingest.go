package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/jobs"
)

func runIngest(ctx context.Context, env *environ, cl *cmdLine) error {
	date := cl.String("date", "", "rehearse on this day (api.mode: test only): the run date for authorization_date "+
		"and the archive folder, as at noon that day in schedule.timezone (default: today)")
	if err := cl.parse(); err != nil {
		return err
	}
	cfg, _, je, err := openJobsOn(env, *cl.cfgPath, jobs.Hooks{}, *date)
	if err != nil {
		return err
	}
	defer je.Close()
	ctx, cancel := stopOnSignal(ctx, env, nil)
	defer cancel()

	outcomes, err := je.Ingest(ctx)
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tROWS\tVALID\tREJECTED\tOUTCOME\tDETAIL")
	for _, o := range outcomes {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\n", o.File, o.Rows, o.Valid, o.Rejected, o.Outcome, o.Detail)
	}
	tw.Flush()
	if len(outcomes) == 0 && err == nil {
		fmt.Fprintln(env.stdout, "no files in", cfg.SFTP.Inbox)
	}
	// One file's trouble stays with that file: the others were handled.
	// The error (on stderr) says why each failed; the exit code is 1.
	var ff *ingest.FilesFailed
	if errors.As(err, &ff) {
		fmt.Fprintf(env.stdout, "%d of %d files failed: %s; the others were handled\n",
			len(ff.Files), len(ff.Files)+ff.Handled, strings.Join(ff.Names(), ", "))
	}
	return err
}
