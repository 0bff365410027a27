package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/batchd/batchd/internal/ingest/csvfile"
)

func runValidate(_ context.Context, env *environ, args []string) error {
	fs := newFlags(env, "validate", "[--test-mode] [--ignore-columns a,b] [--date YYYY-MM-DD] FILE.csv")
	testMode := fs.Bool("test-mode", false, "accept the sandbox's test routing number 999900001 (as api.mode: test does)")
	ignore := fs.String("ignore-columns", "", "comma-separated columns to accept and ignore (as ingest.ignore_columns)")
	date := fs.String("date", "", "run date for the authorization_date window (default today, local time)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(env.stderr, "batchd validate: give exactly one file")
		return errUsage
	}
	run := time.Now()
	if *date != "" {
		d, err := time.ParseInLocation(time.DateOnly, *date, time.Local)
		if err != nil {
			fmt.Fprintf(env.stderr, "batchd validate: --date: want YYYY-MM-DD, got %q\n", *date)
			return errUsage
		}
		run = d
	}
	name := fs.Arg(0)
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	opts := csvfile.Options{IgnoreColumns: splitList(*ignore), RunDate: csvfile.DateOf(run), TestMode: *testMode}
	sum, err := csvfile.Parse(f, opts,
		func(csvfile.Payment) error { return nil },
		func(fd csvfile.Finding) error { _, err := fmt.Fprintf(env.stdout, "%s: %s\n", name, fd); return err })
	var ferr *csvfile.FileError
	if errors.As(err, &ferr) {
		fmt.Fprintf(env.stdout, "%s: %s\n", name, ferr)
		return fmt.Errorf("%s would be rejected: it cannot be read as a payment file", name)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%s: %d rows, %d valid, %d invalid\n", name, sum.Rows, sum.Valid, sum.Invalid)
	if sum.Invalid > 0 {
		return fmt.Errorf("%s would be rejected (ingest.on_invalid: reject_file) or lose %d rows (skip_rows)", name, sum.Invalid)
	}
	return nil
}
