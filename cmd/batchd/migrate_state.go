package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// errStopBatchd is migrate-state's refusal of a bbolt ledger a batchd
// process holds: a copy of a ledger in use would miss its last changes.
var errStopBatchd = errors.New("a batchd process holds the ledger: stop batchd first (the copy must be of a ledger nothing changes)")

// runMigrateState is `batchd migrate-state --from bbolt --to postgres`:
// it copies the bbolt ledger of state_dir into an empty PostgreSQL
// database, checks both and compares their counts, and leaves the bbolt
// file exactly as it was. The copy keeps the ledger's instance (the
// labels of the checks it made), so the bbolt ledger must never be used
// again: the command says so, with the other next steps.
//
// The source is copied from a private copy of the file, made while this
// process holds bbolt's shared lock on it: opening a ledger writes to it
// (its generation, its marker), and the original must stay untouched
// (the way back, should the operator need one). The lock also keeps a
// batchd from starting during the migration.
func runMigrateState(ctx context.Context, env *environ, cl *cmdLine) error {
	from := cl.String("from", "", "the backend the ledger is in now: bbolt (required)")
	to := cl.String("to", "", "the backend to copy it into: postgres (required)")
	dir := cl.String("state-dir", "", "the state directory holding the bbolt ledger (default: the config's state_dir)")
	if err := cl.parse(); err != nil {
		return err
	}
	if *from != config.BackendBbolt || *to != config.BackendPostgres {
		return cl.badUsage("only --from %s --to %s is supported (got --from %q --to %q)",
			config.BackendBbolt, config.BackendPostgres, *from, *to)
	}
	cfg, err := cl.load()
	if err != nil {
		return err
	}
	if *dir == "" {
		*dir = cfg.StateDir
	}
	dsn, err := migrationDSN(env, cfg)
	if err != nil {
		return err
	}
	ctx, cancel := stopOnSignal(ctx, env, nil)
	defer cancel()
	return migrateState(ctx, env, filepath.Join(*dir, state.FileName), dsn)
}

// migrationDSN is the target database's DSN: the config's when it says
// state.backend: postgres, else $BATCHD_POSTGRES_DSN (a bbolt config
// cannot name state.postgres_dsn_file).
func migrationDSN(env *environ, cfg *config.Config) (string, error) {
	if dsn := cfg.PostgresDSN(); dsn != "" {
		return dsn, nil
	}
	if v, ok := env.lookupEnv(config.EnvPostgresDSN); ok && len(v) > 0 {
		return v, nil
	}
	return "", fmt.Errorf("no PostgreSQL database to copy into: set $%s, or give a config with state.backend: postgres and state.postgres_dsn_file", config.EnvPostgresDSN)
}

// migrateState copies the ledger at path into the database of dsn and
// verifies the copy.
func migrateState(ctx context.Context, env *environ, path, dsn string) error {
	unlock, err := lockLedger(path)
	if err != nil {
		return err
	}
	defer unlock()
	before, err := fingerprint(path)
	if err != nil {
		return err
	}
	orig, err := state.CheckFile(path)
	if err != nil {
		return fmt.Errorf("check the bbolt ledger: %w", err)
	}
	if !orig.OK() {
		printReport(env, orig)
		return fmt.Errorf("the bbolt ledger %s is damaged: nothing was copied (%s)", path, orig.Summary())
	}
	src, cleanup, err := openPrivateCopy(path)
	if err != nil {
		return err
	}
	defer cleanup()
	res, err := copyAndVerify(ctx, src, dsn)
	if err != nil {
		return err
	}
	after, err := fingerprint(path)
	if err != nil {
		return err
	}
	if after != before {
		return fmt.Errorf("the bbolt ledger %s changed during the migration (%s, now %s): do not use the PostgreSQL copy; drop and recreate the database, then run migrate-state again", path, before, after)
	}
	printMigration(env, path, res, before)
	return nil
}

// lockLedger takes bbolt's shared lock on the ledger at path (a read-only
// open), which a batchd holding it refuses (errStopBatchd) and which
// keeps one from starting until unlock.
func lockLedger(path string) (unlock func(), err error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("the bbolt ledger: %w (is --state-dir or the config's state_dir right?)", err)
	}
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%s: %w", path, errStopBatchd)
	}
	if err != nil {
		return nil, fmt.Errorf("open the bbolt ledger %s: %w", path, err)
	}
	return func() { b.Close() }, nil
}

// stamp identifies a file's content and modification time.
type stamp struct {
	size  int64
	mtime time.Time
	sum   [sha256.Size]byte
}

func (s stamp) String() string {
	return fmt.Sprintf("%d bytes, modified %s, sha256 %x", s.size, s.mtime.UTC().Format(time.RFC3339Nano), s.sum[:8])
}

func fingerprint(path string) (stamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return stamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return stamp{}, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return stamp{}, fmt.Errorf("read %s: %w", path, err)
	}
	s := stamp{size: fi.Size(), mtime: fi.ModTime()}
	h.Sum(s.sum[:0])
	return s, nil
}

// openPrivateCopy copies the ledger file into a new directory beside its
// state directory's contents (the same file system: no space surprise on
// a small /tmp) and opens that copy, without the snapshot socket.
// cleanup closes and removes it. The copy is opened with the key ring of
// the ledger's state directory (made there if the ledger predates
// sealing), so that numbers in the clear are sealed before they leave for
// PostgreSQL and sealed ones stay readable.
func openPrivateCopy(path string) (*state.DB, func(), error) {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".migrate-*")
	if err != nil {
		return nil, nil, fmt.Errorf("make a private copy of %s: %w", path, err)
	}
	fail := func(err error) (*state.DB, func(), error) {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("make a private copy of %s: %w", path, err)
	}
	if err := state.CopyFile(path, filepath.Join(dir, state.FileName)); err != nil {
		return fail(err)
	}
	keys, _, err := acctseal.LoadOrCreate(filepath.Join(filepath.Dir(path), acctseal.FileName))
	if err != nil {
		return fail(err)
	}
	db, err := state.Open(dir, state.Options{MustExist: true, NoSnapshots: true, AccountKeys: keys})
	if err != nil {
		return fail(err)
	}
	return db, func() { db.Close(); os.RemoveAll(dir) }, nil
}

// migration is what copyAndVerify did.
type migration struct {
	copied   *state.CopyReport
	took     time.Duration
	src, dst *state.Report
	instance string
}

// copyAndVerify copies src into the (empty) database of dsn, opens the
// copy as a ledger, checks both and compares them.
func copyAndVerify(ctx context.Context, src *state.DB, dsn string) (*migration, error) {
	store, err := jobs.OpenPostgresStore(dsn, false, config.DefaultLeaseTTL) // no instance leads a ledger being made
	if err != nil {
		return nil, err
	}
	start := time.Now()
	copied, err := src.CopyTo(ctx, store)
	if err != nil {
		store.Close()
		if copied != nil && copied.Keys > 0 {
			return nil, fmt.Errorf("%w; the database now holds part of a copy: drop and recreate it before running migrate-state again", err)
		}
		return nil, err
	}
	m := &migration{copied: copied, took: time.Since(start), instance: src.Instance()}
	dst, err := jobs.LedgerOnStore(store, state.Options{})
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("open the copy as a ledger: %w", err)
	}
	defer dst.Close()
	if m.src, err = src.Check(); err != nil {
		return nil, err
	}
	if m.dst, err = dst.Check(); err != nil {
		return nil, err
	}
	if err := compareLedgers(m, dst.Instance()); err != nil {
		return nil, fmt.Errorf("%w: do not use the PostgreSQL copy; drop and recreate the database, then run migrate-state again", err)
	}
	return m, nil
}

// compareLedgers returns an error naming every difference between the
// two checks, or either one's faults.
func compareLedgers(m *migration, dstInstance string) error {
	var diffs []string
	if !m.src.OK() {
		diffs = append(diffs, "the bbolt ledger: "+m.src.Summary())
	}
	if !m.dst.OK() {
		diffs = append(diffs, "the copy: "+m.dst.Summary())
	}
	if dstInstance != m.instance {
		diffs = append(diffs, fmt.Sprintf("instance %s, the copy's %s", m.instance, dstInstance))
	}
	for _, c := range counts(m.src, m.dst) {
		if c.a != c.b {
			diffs = append(diffs, fmt.Sprintf("%s: %d in bbolt, %d in the copy", c.name, c.a, c.b))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("the copy does not match the bbolt ledger: %s", strings.Join(diffs, "; "))
}

// count is one compared figure of the two ledgers.
type count struct {
	name string
	a, b int
}

// counts lists the figures migrate-state compares: batches, rows by
// state, checks, funding rows and sources, webhook events.
func counts(a, b *state.Report) []count {
	out := []count{{"batches", a.Batches, b.Batches}, {"rows", a.Rows, b.Rows}}
	var states []payment.RowState
	for s := range a.ByState {
		states = append(states, s)
	}
	for s := range b.ByState {
		if _, ok := a.ByState[s]; !ok {
			states = append(states, s)
		}
	}
	slices.Sort(states)
	for _, s := range states {
		out = append(out, count{"  " + string(s), a.ByState[s], b.ByState[s]})
	}
	return append(out, count{"checks", a.Checks, b.Checks}, count{"funding rows", a.SourceRows, b.SourceRows},
		count{"funding sources", a.Sources, b.Sources}, count{"webhook events", a.Events, b.Events})
}

func printMigration(env *environ, path string, m *migration, orig stamp) {
	w := env.stdout
	fmt.Fprintf(w, "copied the bbolt ledger %s to %s: %d keys in %d buckets in %s, compared key by key\n",
		path, m.copied.To, m.copied.Keys, len(m.copied.Buckets), m.took.Round(time.Millisecond))
	fmt.Fprintln(w, "checked both: OK")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  \t%8s\t%8s\n", "bbolt", "postgres")
	for _, c := range counts(m.src, m.dst) {
		fmt.Fprintf(tw, "  %s\t%8d\t%8d\n", c.name, c.a, c.b)
	}
	tw.Flush()
	fmt.Fprintf(w, "instance %s, kept: the labels of the checks already made stay this ledger's\n", m.instance)
	fmt.Fprintf(w, "the bbolt file is unchanged (%s)\n", orig)
	fmt.Fprintln(w, "next:")
	fmt.Fprintln(w, "  1. in the config, set state.backend: postgres, state.postgres_dsn_file (or $"+config.EnvPostgresDSN+"), and leave backup.schedule unset or \"\" (no snapshots: its default with postgres)")
	fmt.Fprintln(w, "     (back the database up with pg_dump or point-in-time recovery; after restoring one, run batchd mark-restored)")
	fmt.Fprintf(w, "     and state.account_keys_file: %s, copied (mode 0600) to every host: the rows' account numbers are sealed under its keys\n",
		filepath.Join(filepath.Dir(path), acctseal.FileName))
	fmt.Fprintln(w, "  2. run `batchd check` and `batchd status`, then start batchd on every host that shares the database")
	fmt.Fprintln(w, "  3. never start batchd on the bbolt ledger again: the copy carries its instance and labels, and two live ledgers would pay twice;")
	fmt.Fprintf(w, "     keep %s as an archive, out of batchd's way\n", path)
}
