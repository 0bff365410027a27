// Command batchd picks up payment files from SFTP, validates them, submits
// every valid row as an eCheck exactly once, reconciles the checks and
// writes reports back. Run "batchd help" for the subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"golang.org/x/term"

	"github.com/batchd/batchd/internal/suggest"
)

// Exit codes, documented in the README.
const (
	exitOK          = 0
	exitFailure     = 1 // config, SFTP, API or state failure; or validate found errors
	exitUsage       = 2 // bad command line
	exitInterrupted = 3 // stopped by a signal or --max-duration with work left
)

// errUsage marks a command-line mistake; the command has printed why.
var errUsage = errors.New("usage")

// errInterrupted marks a run that stopped before its work was done.
var errInterrupted = errors.New("interrupted")

// command is one subcommand. run gets the arguments after its name; a
// command that reads the configuration is made by configured.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *environ, args []string) error
}

// environ is what every command may touch of the process, so that tests run
// commands in-process with their own streams and environment.
type environ struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	lookupEnv      func(string) (string, bool)
	// signals delivers SIGINT/SIGTERM/SIGHUP to commands that handle
	// them themselves (run, submit); nil in tests.
	signals <-chan os.Signal
	// exit ends the process at once (a second signal).
	exit func(code int, sig os.Signal)
}

func commands() []command {
	return []command{
		{"demo", "run the whole job once against an in-process sandbox and SFTP server", runDemo},
		configured("run", "run the daemon: scheduled ingest, submit and reconcile",
			"[--config F]", runDaemon),
		configured("ingest", "pick up new payment files from SFTP once",
			"[--config F] [--date YYYY-MM-DD]", runIngest),
		configured("submit", "submit pending rows as eChecks",
			"[--config F] [--max-duration D]", runSubmit),
		configured("reconcile", "reconcile checks and write the reports",
			"[--config F] [--from YYYY-MM-DD --to YYYY-MM-DD]", runReconcile),
		configured("status", "list batches and their rows by state",
			"[--config F] [--json]", runStatus),
		configured("release", "release a row held because its payee's bank account changed",
			"--file F --line L [--batch N] [--by NAME] [--config F]", runRelease),
		configured("prune", "archive and remove finished batches, then compact the ledger (batchd stopped)",
			"--before YYYY-MM-DD [--config F] [--no-compact]", runPrune),
		configured("init", "create the ledger in state_dir",
			"[--config F]", runInit),
		configured("backup", "write a checked snapshot of the ledger, while batchd runs or not",
			"[--config F] [--to PATH]", runBackup),
		configured("restore", "install a snapshot as the ledger (batchd stopped); never pays twice",
			"--from SNAPSHOT [--config F] [--other-instance]", runRestore),
		configured("rekey", "seal the ledger's account numbers under a new key and drop the old ones (batchd stopped)",
			"[--config F] [--keep-old-keys]", runRekey),
		configured("keylost", "reject the unsent rows whose account number's key is lost, so they can be sent again (batchd stopped)",
			"[--config F]", runKeyLost),
		configured("check", "check the ledger (or a copy of it) for damage",
			"[--config F | --file PATH] [--json]", runCheck),
		configured("doctor", "check that the installation can work: config, secrets, SFTP, API key, ledger, webhook, clock",
			"[--config F]", runDoctor),
		configured("migrate-state", "copy the bbolt ledger into an empty PostgreSQL database and verify the copy",
			"--from bbolt --to postgres [--config F] [--state-dir DIR]", runMigrateState),
		configured("mark-restored", "tell a PostgreSQL ledger its database was restored to an earlier moment; never pays twice",
			"--at TIME [--from TEXT] [--config F]", runMarkRestored),
		{"validate", "check a payment file offline, as ingest would", runValidate},
		{"template", "write the XLSX template of a kind of file, its identifier columns Text", runTemplate},
		{"sandbox", "serve an emulator of the eCheck and ACH APIs' test mode", runSandbox},
		{"version", "print the version", runVersion},
	}
}

func main() {
	// batchd's working set is large only briefly (a reconcile holds every
	// check of its window); a GC target of half the default keeps its peak
	// memory well down for a few percent more GC work. An explicit GOGC
	// from the administrator wins.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(50)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	env := &environ{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, lookupEnv: os.LookupEnv, signals: sigs,
		exit: func(code int, sig os.Signal) {
			fmt.Fprintf(os.Stderr, "batchd: second signal (%v): exiting now; rows in flight are looked up on the next start\n", sig)
			os.Exit(code)
		}}
	os.Exit(Main(context.Background(), env, os.Args[1:]))
}

// Main runs one command line and returns the exit code.
func Main(ctx context.Context, env *environ, args []string) int {
	if len(args) == 2 && args[0] == "help" {
		return help(ctx, env, args[1])
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = []string{"version"}
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := runCommand(ctx, env, c, args[1:])
		switch {
		case err == nil:
			return exitOK
		case errors.Is(err, flag.ErrHelp):
			return exitOK
		case errors.Is(err, errUsage):
			return exitUsage
		case errors.Is(err, errInterrupted):
			fmt.Fprintf(env.stderr, "batchd %s: %v\n", c.name, err)
			return exitInterrupted
		default:
			fmt.Fprintf(env.stderr, "batchd %s: %v\n", c.name, err)
			return exitFailure
		}
	}
	return unknownCommand(env, args[0])
}

// unknownCommand says so, with the command the person most likely meant
// ("satus": status), and the list.
func unknownCommand(env *environ, name string) int {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	fmt.Fprintf(env.stderr, "batchd: unknown command %q", name)
	if s := suggest.Closest(name, names, 2); s != "" {
		fmt.Fprintf(env.stderr, "; did you mean %q?", s)
	}
	fmt.Fprint(env.stderr, "\n\n")
	usage(env.stderr)
	return exitUsage
}

// help prints one command's help, its usage line and flags, on stdout:
// "batchd help run" is "batchd run -h", asked for rather than a mistake.
// Every command parses its flags before it does anything, so -h only
// prints.
func help(ctx context.Context, env *environ, name string) int {
	if name == "help" {
		usage(env.stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == name {
			fmt.Fprintf(env.stdout, "batchd %s: %s\n\n", c.name, c.summary)
			out := *env
			out.stderr = env.stdout
			if err := runCommand(ctx, &out, c, []string{"-h"}); err != nil && !errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(env.stderr, "batchd help %s: %v\n", name, err)
				return exitFailure
			}
			return exitOK
		}
	}
	return unknownCommand(env, name)
}

// runCommand runs c and turns a panic, which would end the process with
// Go's exit code 2 (the code for a bad command line) and a stack dump,
// into an error: batchd never ends in a panic, whatever it is fed. Every
// ledger change is a committed transaction, so a panic mid-way loses at
// most the step it interrupted, which the next run redoes.
func runCommand(ctx context.Context, env *environ, c command, args []string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v; nothing was lost (every recorded step is committed), but please report this with the log and stack below\n%s", r, debug.Stack())
		}
	}()
	return c.run(ctx, env, args)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: batchd <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-13s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun \"batchd help <command>\" (or \"batchd <command> -h\") for a command's flags; \"batchd --version\" for the version.")
}

// newFlags returns a FlagSet that reports errors to env.stderr and returns
// them rather than exiting.
func newFlags(env *environ, name, args string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "usage: batchd %s %s\n", name, args)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses and maps a flag error to errUsage.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 && fs.Name() != "validate" {
		fmt.Fprintf(fs.Output(), "batchd %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return errUsage
	}
	return nil
}

// newLogger builds the process logger: JSON for journald (stderr not a
// terminal), text for a person at a terminal, unless format forces one.
func newLogger(w io.Writer, level, format string) *slog.Logger {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		lv = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == "text" || (format != "json" && isTerminal(w)) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
