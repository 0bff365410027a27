package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/ingest/sheet"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/payment"
)

func runValidate(ctx context.Context, env *environ, args []string) error {
	fs := newFlags(env, "validate", "[--config F] [--online] [--test-mode] [--ignore-columns a,b] [--delimiter D] [--sheet NAME] [--date YYYY-MM-DD] FILE.csv|FILE.xlsx")
	cfgPath := fs.String("config", "", "judge the file as ingest would with this configuration: its schedule.timezone, "+
		"ingest.delimiter, ingest.ignore_columns and api.mode (default $"+config.EnvConfig+", else no configuration)")
	testMode := fs.Bool("test-mode", false, "accept the sandbox's test routing number 999900001 (as api.mode: test does)")
	ignore := fs.String("ignore-columns", "", "comma-separated columns to accept and ignore (as ingest.ignore_columns), added to the configuration's")
	delimiter := fs.String("delimiter", "", `cell separator: "," ";" or "tab" (as ingest.delimiter; default the configuration's, else ",")`)
	date := fs.String("date", "", "run date for the authorization_date window and the micro-deposit deprecation: "+
		"YYYY-MM-DD, or an RFC 3339 time (2026-03-02T09:00:00-05:00) whose day in schedule.timezone (with --config, "+
		"else local time) counts, as when ingest will run (default today there)")
	sheetName := fs.String("sheet", "", "the sheet of an XLSX file to read (as ingest.sheet; default the configuration's, else the first)")
	online := fs.Bool("online", false, "also ask the service's bank directory about each routing number, as ingest does (ingest.check_routing): "+
		"needs --config, for the API's address and key; nothing is written")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(env.stderr, "batchd validate: give exactly one file")
		return errUsage
	}
	opts := csvfile.Options{TestMode: *testMode}
	so := sheet.Options{Sheet: *sheetName}
	// Without a configuration the run date is today in local time ($TZ);
	// with one it is today in schedule.timezone, as for ingest, so that a
	// row cannot pass validate and fail ingest over the date.
	loc := time.Local
	// $BATCHD_CONFIG counts as --config, as for every other command; but
	// validate is offline, and without either reads no configuration
	// rather than the default path's.
	var routing func(context.Context, string) (string, error)
	if *online && *cfgPath == "" && env.getenv(config.EnvConfig) == "" {
		fmt.Fprintln(env.stderr, "batchd validate: --online needs --config (or $"+config.EnvConfig+"): the API's address and key")
		return errUsage
	}
	if *cfgPath != "" || env.getenv(config.EnvConfig) != "" {
		cfg, err := loadConfig(env, *cfgPath)
		if err != nil {
			return err
		}
		if *online {
			if routing, err = onlineRouting(cfg); err != nil {
				return err
			}
		}
		loc = cfg.Location()
		opts.IgnoreColumns = append(opts.IgnoreColumns, cfg.Ingest.IgnoreColumns...)
		opts.Delimiter = cfg.Ingest.Delimiter
		so.MaxBytes = cfg.Ingest.MaxFileBytes
		if so.Sheet == "" {
			so.Sheet = cfg.Ingest.Sheet
		}
		opts.TestMode = opts.TestMode || cfg.API.Mode == config.ModeTest
	}
	opts.IgnoreColumns = append(opts.IgnoreColumns, ingest.SplitList(*ignore)...)
	if *delimiter != "" {
		d, ok := delimiterFlag(*delimiter)
		if !ok {
			fmt.Fprintf(env.stderr, "batchd validate: --delimiter: want \",\", \";\" or \"tab\", got %q\n", *delimiter)
			return errUsage
		}
		opts.Delimiter = d
	}
	run := time.Now().In(loc)
	if *date != "" {
		d, ok := runDate(*date, loc)
		if !ok {
			fmt.Fprintf(env.stderr, "batchd validate: --date: want YYYY-MM-DD or an RFC 3339 time like 2026-03-02T09:00:00Z, got %q\n", *date)
			return errUsage
		}
		run = d
	}
	opts.RunDate = csvfile.DateOf(run)

	name := fs.Arg(0)
	// The file's kind is told by its header, as ingest tells it; a CSV
	// file and an XLSX workbook are told apart as ingest does too.
	unchecked := func(err error) {
		fmt.Fprintf(env.stderr, "batchd validate: %s: routing numbers not checked: the bank directory could not be asked: %v\n", name, err)
	}
	kind, sum, err := validateFile(ctx, name, so, opts, routing, unchecked,
		func(fd csvfile.Finding) error { _, err := fmt.Fprintf(env.stdout, "%s: %s\n", name, fd); return err })
	var ferr *csvfile.FileError
	switch {
	case errors.As(err, &ferr) && ferr.Damaged:
		// The verdict leaves out the cell a finding above already named.
		fmt.Fprintf(env.stdout, "%s: %s\n", name, ferr.Verdict())
		fmt.Fprintf(env.stdout, "%s: %d rows, every one refused (%d with no other problem)\n", name, sum.Rows, sum.Valid)
		return fmt.Errorf("%s would be rejected as a whole, every row, whatever ingest.on_invalid says: "+
			"a spreadsheet dropped, or may have dropped, leading zeros from its numbers", name)
	case errors.As(err, &ferr):
		fmt.Fprintf(env.stdout, "%s: %s\n", name, ferr)
		return fmt.Errorf("%s would be rejected: it cannot be read as %s", name, kind.Word())
	case err != nil:
		return err
	}
	fmt.Fprintf(env.stdout, "%s: %s\n", name, summary(kind, sum))
	if info, _ := kind.Info(); info.Applied {
		fmt.Fprintf(env.stdout, "%s: %s: what the ledger and the service say of each line is known when ingest applies it, in the file's results report\n", name, kind.Word())
		if sum.Invalid > 0 {
			return fmt.Errorf("%s: %d lines would be refused, each with its reason in the results report; the others would be applied", name, sum.Invalid)
		}
		return nil
	}
	if sum.Invalid > 0 {
		return fmt.Errorf("%s would be rejected (ingest.on_invalid: reject_file) or lose %d rows (skip_rows)", name, sum.Invalid)
	}
	return nil
}

// validateFile tells the kind of the file at name and parses it, calling
// onFinding for each finding, as ingest would.
func validateFile(ctx context.Context, name string, so sheet.Options, opts csvfile.Options, routing func(context.Context, string) (string, error),
	unchecked func(error), onFinding func(csvfile.Finding) error) (payment.BatchKind, csvfile.Summary, error) {
	in, err := ingest.OpenInput(name, name, so)
	if err != nil {
		return payment.KindPayments, csvfile.Summary{}, err
	}
	kind, err := in.Kind(opts)
	in.Close()
	if err != nil {
		return kind, csvfile.Summary{}, err
	}
	if in, err = ingest.OpenInput(name, name, so); err != nil {
		return kind, csvfile.Summary{}, err
	}
	defer in.Close()
	if info, _ := kind.Info(); info.Applied {
		sum, err := in.Applied(jobs.LineKinds()[kind], opts, onFinding)
		return kind, sum, err
	}
	if kind.Payments() {
		rc := ingest.NewRoutingCheck(ctx, routing, onFinding, unchecked)
		sum, err := in.Payments(opts, func(p csvfile.Payment) error { _, err := rc.Pass(p); return err }, onFinding)
		return kind, rc.Adjust(sum), err
	}
	sum, err := in.Sources(kind, opts, nil, onFinding)
	return kind, sum, err
}

// summary is the count line of validate: "12 rows, 10 valid, 2 invalid",
// and the warnings when there are any; a funding-source or verification
// file's starts with its kind: "funding-sources file: 5 rows, …".
func summary(kind payment.BatchKind, sum csvfile.Summary) string {
	s := fmt.Sprintf("%d rows, %d valid, %d invalid", sum.Rows, sum.Valid, sum.Invalid)
	if !kind.Payments() {
		s = kind.String() + " file: " + s
	}
	switch sum.Warnings {
	case 0:
	case 1:
		s += ", 1 warning"
	default:
		s += fmt.Sprintf(", %d warnings", sum.Warnings)
	}
	return s
}

// delimiterFlag reads --delimiter: a comma, a semicolon, or a tab written
// as "tab", `\t` or a tab character.
func delimiterFlag(s string) (string, bool) {
	switch s {
	case ",", ";":
		return s, true
	case "tab", `\t`, "\t":
		return "\t", true
	}
	return "", false
}

// runDate reads --date: a day (YYYY-MM-DD, in loc), or an instant (RFC
// 3339) whose day in loc is the run date, so that a user can ask "will
// this file pass when ingest runs at 09:00 New York time" in the zone
// ingest judges dates in.
func runDate(s string, loc *time.Location) (time.Time, bool) {
	if d, err := time.ParseInLocation(time.DateOnly, s, loc); err == nil {
		return d, true
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.In(loc), true
	}
	return time.Time{}, false
}
