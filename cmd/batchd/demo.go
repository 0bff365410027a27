package main

import (
	"context"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/demo"
)

func runDemo(ctx context.Context, env *environ, args []string) error {
	fs := newFlags(env, "demo", "[--dir D] [--date YYYY-MM-DD]")
	dir := fs.String("dir", "", "directory for the demo's files (default: a new temporary directory)")
	date := fs.String("date", "", "run the demo on this day (UTC), e.g. the day before a bank holiday (default: today)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var day time.Time
	if *date != "" {
		d, err := time.Parse(time.DateOnly, *date)
		if err != nil {
			fmt.Fprintf(env.stderr, "batchd demo: --date: want YYYY-MM-DD, got %q\n", *date)
			return errUsage
		}
		day = d
	}
	_, err := demo.Run(ctx, demo.Options{Dir: *dir, Out: env.stdout, Date: day})
	return err
}
