// Package state is batchd's ledger: an embedded bbolt database that records
// every file, batch and row, and every step each row takes.
//
// It is the only package that writes the database. Every change of a row's
// state goes through a named transition (see Transition); a transition that
// the row's current state does not allow is an error, so a bug elsewhere
// cannot, say, mark a row in flight twice. The one invariant everything else
// rests on is that a row is durably in flight, with the label and number its
// check will carry, before the create request leaves the process.
//
// The database file is mode 0600 and is opened with a lock timeout, so a
// second batchd on the same state fails at once instead of hanging. Writes
// are never NoSync: every commit is on disk before the call returns.
package state

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/payment"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the layout this build reads and writes.
const SchemaVersion = 1

// FileName is the database's name inside the state directory.
const FileName = "batchd.db"

var (
	bucketMeta    = []byte("meta")
	bucketFiles   = []byte("files")   // sha256 hex -> payment.File
	bucketBatches = []byte("batches") // batch id -> payment.Batch
	bucketRows    = []byte("rows")    // payment.RowKey -> payment.Row
	bucketOpen    = []byte("open")    // payment.RowKey -> state, rows not yet submitted
	bucketTrack   = []byte("track")   // payment.RowKey -> nil, rows whose check is not final
	bucketChecks  = []byte("checks")  // check_id -> payment.RowKey
	bucketNumbers = []byte("numbers") // sequence of assigned check numbers
	bucketJobs    = []byte("jobs")    // job name -> last successful run (RFC 3339)

	keySchema   = []byte("schema")
	keyInstance = []byte("instance")
)

// ErrLocked is returned by Open when another process holds the database.
var ErrLocked = errors.New("state is locked by another batchd process")

// migrations[v] upgrades a database from schema v to v+1. It is empty while
// there has only been one schema; the hook is here so that the first change
// of layout has an obvious home.
var migrations = map[int]func(*bolt.Tx) error{}

// Options tunes Open. The zero value is usable.
type Options struct {
	// Timeout bounds the wait for the file lock (default 1s).
	Timeout time.Duration
	// Now is the clock for history steps (default time.Now).
	Now func() time.Time
	// LoadChunk is how many rows a Loader commits per transaction
	// (default 5,000). One chunk is written while the next is parsed, so
	// a larger chunk buys no speed; it only holds more rows and dirty
	// pages in memory (20,000 took a 1M-row ingest over 140 MB RSS).
	LoadChunk int
	// GroupCommitDelay is how long a row transition waits for others to
	// share its commit (default 2ms; bbolt's own default is 10ms). Every
	// submitted row waits for two commits, so this delay is paid twice per
	// row by every worker; a shorter one raises throughput at a given
	// concurrency and still groups dozens of rows per commit.
	GroupCommitDelay time.Duration
}

// DB is an open ledger. Its methods are safe for concurrent use.
type DB struct {
	bolt     *bolt.DB
	path     string
	now      func() time.Time
	chunk    int
	instance string

	mu      sync.Mutex // guards the commit counter
	lastTx  int
	commits int64
}

// Open opens (creating if needed) the ledger in dir. The directory is
// created 0700 and the file forced to 0600.
func Open(dir string, opts Options) (*DB, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.LoadChunk <= 0 {
		opts.LoadChunk = 5000
	}
	if opts.GroupCommitDelay <= 0 {
		opts.GroupCommitDelay = 2 * time.Millisecond
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open state: create %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.Timeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("open state %s: %w (waited %s); stop the other process or point state_dir elsewhere", path, ErrLocked, opts.Timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		b.Close()
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	b.MaxBatchDelay = opts.GroupCommitDelay
	d := &DB{bolt: b, path: path, now: opts.Now, chunk: opts.LoadChunk}
	if err := b.Update(d.initSchema); err != nil {
		b.Close()
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	if err := d.discardLoading(); err != nil {
		b.Close()
		return nil, fmt.Errorf("open state %s: discard half-loaded batches: %w", path, err)
	}
	return d, nil
}

// initSchema creates the buckets, stamps or checks the schema version and
// runs any migrations, all in one transaction.
func (d *DB) initSchema(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketMeta, bucketFiles, bucketBatches, bucketRows, bucketOpen, bucketTrack, bucketChecks, bucketNumbers, bucketJobs} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	meta := tx.Bucket(bucketMeta)
	v := 0
	if raw := meta.Get(keySchema); raw != nil {
		v = int(binary.BigEndian.Uint64(raw))
	} else {
		v = SchemaVersion // a new database starts at the current layout
	}
	if v > SchemaVersion {
		return fmt.Errorf("schema version %d was written by a newer batchd (this one reads %d)", v, SchemaVersion)
	}
	for ; v < SchemaVersion; v++ {
		m, ok := migrations[v]
		if !ok {
			return fmt.Errorf("no migration from schema version %d", v)
		}
		if err := m(tx); err != nil {
			return fmt.Errorf("migrate schema %d to %d: %w", v, v+1, err)
		}
	}
	if err := meta.Put(keySchema, u64(SchemaVersion)); err != nil {
		return err
	}
	inst := meta.Get(keyInstance)
	if inst == nil {
		var b [3]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		inst = []byte(hex.EncodeToString(b[:]))
		if err := meta.Put(keyInstance, inst); err != nil {
			return err
		}
	}
	d.instance = string(inst)
	return nil
}

// Path is the database file's path.
func (d *DB) Path() string { return d.path }

// Instance is a short random identifier of this ledger, made when it was
// created. It goes into the labels batchd assigns, so that two
// installations (or a state directory made anew) never share a label.
func (d *DB) Instance() string { return d.instance }

// Close closes the database.
func (d *DB) Close() error { return d.bolt.Close() }

// Stats reports bbolt's counters; tests and benchmarks use TxStats to count
// commits.
func (d *DB) Stats() bolt.Stats { return d.bolt.Stats() }

func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

// update runs fn in a write transaction and counts the commit.
func (d *DB) update(fn func(*bolt.Tx) error) (err error) {
	defer d.recoverDamage("write", &err)
	return d.fail("write", d.bolt.Update(func(tx *bolt.Tx) error {
		tx.OnCommit(d.counter(tx))
		return fn(tx)
	}))
}

// batch runs fn through bbolt's group commit and counts the commit once
// per transaction, however many callers shared it.
func (d *DB) batch(fn func(*bolt.Tx) error) (err error) {
	defer d.recoverDamage("write", &err)
	return d.fail("write", d.bolt.Batch(func(tx *bolt.Tx) error {
		tx.OnCommit(d.counter(tx))
		return fn(tx)
	}))
}

// view runs fn in a read transaction.
func (d *DB) view(fn func(*bolt.Tx) error) (err error) {
	defer d.recoverDamage("read", &err)
	return d.fail("read", d.bolt.View(fn))
}

// fail files err as a ledger failure (payment.ErrLedger: the disk is full,
// the file cannot be read or is damaged) unless it is one of the refusals
// the domain names, which say nothing about the ledger's health.
func (d *DB) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	for _, refusal := range []error{payment.ErrIllegal, payment.ErrNotFound, payment.ErrCheckOwned, payment.ErrDuplicate, payment.ErrLedger} {
		if errors.Is(err, refusal) {
			return err
		}
	}
	// bbolt's own error names the file again; the message names it once.
	if pe, ok := err.(*fs.PathError); ok && pe.Path == d.path {
		err = fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return &payment.LedgerError{Op: op, Path: d.path, Err: err}
}

// recoverDamage turns a panic inside bbolt, which is how it meets a
// damaged page ("invalid freelist page", a truncated file), into a ledger
// error: batchd never ends in a panic on a damaged ledger. bbolt rolls the
// transaction back on its way out.
func (d *DB) recoverDamage(op string, err *error) {
	if r := recover(); r != nil {
		*err = &payment.LedgerError{Op: op, Path: d.path,
			Err: fmt.Errorf("the ledger file is damaged (%v); stop batchd and keep the file for inspection; restore the last good copy of it", r)}
	}
}

func (d *DB) counter(tx *bolt.Tx) func() {
	id := tx.ID()
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if id != d.lastTx {
			d.lastTx = id
			d.commits++
		}
	}
}

// Commits reports how many write transactions this DB has committed since
// Open. The submit benchmark divides it by rows to show group commit at
// work.
func (d *DB) Commits() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.commits
}

// The ledger is the domain's Ledger, and a Loader its Loader.
var (
	_ payment.Ledger = (*DB)(nil)
	_ payment.Loader = (*Loader)(nil)
)
