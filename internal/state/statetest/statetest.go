// Package statetest is the ledger's conformance suite: Run takes a
// Backend and runs every test of the ledger's contract against ledgers it
// makes, so that each storage beneath internal/state (bbolt, PostgreSQL)
// passes the same tests, in the style of river's riverdrivertest.
//
// The suite uses only the ledger's exported API and the hooks a Backend
// gives it (open, reopen, snapshot and restore). Tests of one
// storage's own machinery (codecs, pages, compaction, the file marker,
// damaged files) stay beside that storage.
//
// Every test runs on a ledger of its own, on a clock of its own that
// starts at 2026-03-02 09:00 UTC and moves only when the test moves it, so
// the suite passes on any date. Tests run in parallel: a Backend's ledgers
// must be independent of one another.
package statetest

import (
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/state"
)

// Backend makes ledgers of one storage for the suite.
type Backend struct {
	// Name names the backend in failures ("bbolt", "postgres").
	Name string
	// New makes a place for one new, empty ledger, used by one test only
	// and removed when it ends. The ledger is created by its first Open.
	New func(t testing.TB) Ledger
	// NoRestore, when set, says why the backend cannot restore a
	// snapshot: the tests of restore semantics skip at once, saying so,
	// and Ledger.Snapshot and Restore are never called.
	NoRestore string
}

// Ledger is one ledger of a Backend, which a test opens, closes and
// opens again ("after a crash or a restart": a closed ledger is all
// a later process finds). The suite checks it with DB.Check, which is
// `batchd check` on an open ledger of any backend.
type Ledger interface {
	// Open opens the ledger with opts (the first Open creates it), or
	// fails the test. The DB is closed when the test ends; a test may
	// close it before, and Open the ledger again.
	Open(t testing.TB, opts state.Options) *state.DB
	// Snapshot takes a copy of the ledger d holds open, as it is now, as
	// `batchd backup` (or the operator's backup of the database) does.
	Snapshot(t testing.TB, d *state.DB) Snapshot
	// Restore puts snap back as the ledger, which is closed by now, as
	// `batchd restore` does at time at (and then the ledger's restore
	// rules: every row without a result in doubt, a new instance, the
	// restored mark), and returns the mark. The test opens it again.
	Restore(t testing.TB, snap Snapshot, at time.Time) *state.RestoreMark
	// Older copies the ledger d holds open as it is now, the way the
	// backend's own failures keep an older copy (a file copied aside; a
	// standby, a dump or a storage snapshot of the database).
	Older(t testing.TB, d *state.DB) Snapshot
	// PutBack puts an Older copy in the ledger's place behind batchd's
	// back, applying no restore rule, and returns the ledger as batchd
	// then finds it. Not in place: d is closed, the copy becomes the
	// ledger as a promoted standby or a restored dump would (PostgreSQL:
	// another database, so another origin; bbolt: the file replaced),
	// and the ledger is opened again with opts: its DB, or Open's error.
	// In place: the contents go back under the open d, keeping the
	// database's origin (a storage snapshot rolled back), and d is
	// returned; a backend that cannot (bbolt: the open file is locked)
	// does as not in place.
	PutBack(t testing.TB, d *state.DB, older Snapshot, inPlace bool, opts state.Options) (*state.DB, error)
}

// Snapshot is a backend's copy of a ledger, opaque to the suite.
type Snapshot any

// Run runs the whole suite against b, grouped by concern.
func Run(t *testing.T, b Backend) {
	if b.New == nil {
		t.Fatalf("statetest: backend %q has no New", b.Name)
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(t, b)
				})
			}
		})
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, b Backend)
}

// groups is the suite, by concern. Each group's cases live in the file
// of the same name.
var groups = []struct {
	name  string
	cases []testCase
}{
	{"Rows", rowCases},
	{"Loading", loadingCases},
	{"GroupCommit", groupCommitCases},
	{"Recovery", recoveryCases},
	{"Resolver", resolverCases},
	{"Funding", fundingCases},
	{"Events", eventCases},
	{"Payees", payeeCases},
	{"Retention", retentionCases},
	{"Restore", restoreCases},
	{"Rewind", rewindCases},
	{"LostBatches", lostCases},
	{"Cancels", cancelCases},
	{"Lines", lineCases},
	{"Banks", bankCases},
	{"Tokens", tokenCases},
	{"Edits", editCases},
	{"Invariants", invariantCases},
	{"Jobs", jobCases},
}

// Epoch is where every test's clock starts.
var Epoch = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// Clock is a settable clock, safe for use from many goroutines.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Add moves the clock on by d and returns the new time.
func (c *Clock) Add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// fixture is one test's ledger, its clock and the DB open on it.
type fixture struct {
	t     *testing.T
	l     Ledger
	clock *Clock
	opts  state.Options
	*state.DB
}

// open makes a new ledger of b and opens it, loading in chunks of three
// rows (so that a few rows span several transactions) on a clock at
// Epoch. edit, when given, changes the options first.
func open(t *testing.T, b Backend, edit ...func(*state.Options)) *fixture {
	t.Helper()
	f := &fixture{t: t, l: b.New(t), clock: &Clock{t: Epoch}}
	f.opts = state.Options{LoadChunk: 3, Now: f.clock.Now}
	for _, e := range edit {
		e(&f.opts)
	}
	f.DB = f.l.Open(t, f.opts)
	return f
}

// reopen closes the ledger and opens it again, as the next process does.
func (f *fixture) reopen() {
	f.t.Helper()
	if err := f.DB.Close(); err != nil {
		f.t.Fatalf("close: %v", err)
	}
	f.DB = f.l.Open(f.t, f.opts)
}

// invariants checks the open ledger as `batchd check` does (DB.Check),
// and fails the test on any fault.
func (f *fixture) invariants() *state.Report {
	f.t.Helper()
	rep, err := f.Check()
	if err != nil {
		f.t.Fatalf("check: %v", err)
	}
	if !rep.OK() {
		f.t.Fatalf("invariants broken: %v", rep.Faults)
	}
	return rep
}

// needRestore skips the test when b cannot restore a snapshot.
func needRestore(t *testing.T, b Backend) {
	t.Helper()
	if b.NoRestore != "" {
		t.Skipf("%s cannot restore a snapshot: %s", b.Name, b.NoRestore)
	}
}

// restore takes a snapshot now, runs between (the ledger moves on after
// the snapshot), closes the ledger, restores the snapshot at time at and
// opens the ledger again. It returns the restored mark.
func (f *fixture) restore(between func(), at time.Time) *state.RestoreMark {
	f.t.Helper()
	snap := f.l.Snapshot(f.t, f.DB)
	if between != nil {
		between()
	}
	if err := f.DB.Close(); err != nil {
		f.t.Fatalf("close: %v", err)
	}
	m := f.l.Restore(f.t, snap, at)
	f.DB = f.l.Open(f.t, f.opts)
	return m
}
