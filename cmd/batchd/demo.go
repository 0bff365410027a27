package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/demo"
)

func runDemo(ctx context.Context, env *environ, args []string) error {
	fs := newFlags(env, "demo", "[--dir D] [--date YYYY-MM-DD] [--file F]...")
	dir := fs.String("dir", "", "directory for the demo's files (default: a new temporary directory)")
	date := fs.String("date", "", "run the demo on this day (UTC), e.g. the day before a bank holiday (default: today)")
	var files stringList
	fs.Var(&files, "file", "rehearse your own payment file (CSV or XLSX; repeat for several) instead of the samples: "+
		"run against this machine's sandbox only, with the sandbox's test bank details in place of the real ones")
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
	_, err := demo.Run(ctx, demo.Options{Dir: *dir, Out: env.stdout, Date: day, Files: files})
	return err
}

// stringList is a flag that may be given several times.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }
