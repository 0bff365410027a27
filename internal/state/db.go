// Package state is batchd's ledger: it records every file, batch and row,
// and every step each row takes, in a store of the kv contract
// (internal/state/kv): a bbolt file (internal/state/bolt) or a PostgreSQL
// database several instances share (internal/state/postgres). The rules
// are written here once, over that contract; each backend owns its
// storage.
//
// It is the only package that writes the database. Every change of a row's
// state goes through a named transition (see Transition); a transition that
// the row's current state does not allow is an error, so a bug elsewhere
// cannot, say, mark a row in flight twice. The one invariant everything else
// rests on is that a row is durably in flight, with the label and number its
// check will carry, before the create request leaves the process.
//
// A ledger file is mode 0600 and is opened with a lock timeout, so a
// second batchd on the same state fails at once instead of hanging. Writes
// are never NoSync: every commit is on disk before the call returns.
package state

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	boltkv "github.com/batchd/batchd/internal/state/bolt"
	"github.com/batchd/batchd/internal/state/kv"
)

// SchemaVersion is the layout this build reads and writes. Version 2 added
// the funding-source buckets (src_*): an older batchd would take a funding
// batch for a payment batch whose rows it cannot see, so it must refuse
// the ledger rather than report on it.
//
// The webhook events' buckets (hook_*, webhook.go) need no version: the
// first Record makes them, a ledger without them is sound, and a build
// that does not know them never looks at them.
const SchemaVersion = 2

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

	// Funding-source rows (internal/funding) live apart from payment
	// rows, keyed alike, so that no payment job ever meets one.
	bucketSrcRows  = []byte("src_rows")  // payment.RowKey -> funding.Row (JSON)
	bucketSrcOpen  = []byte("src_open")  // payment.RowKey -> state, rows without a result
	bucketSrcTrack = []byte("src_track") // payment.RowKey -> nil, submitted rows whose status is Tracked
	bucketSrcIDs   = []byte("src_ids")   // source id -> payment.RowKey, the row that owns it (never a Verify row)

	keySchema   = []byte("schema")
	keyInstance = []byte("instance")
)

// migrations[v] upgrades a database from schema v to v+1, inside the
// transaction that has already created every bucket of the current layout.
var migrations = map[int]func(kv.Tx) error{
	// 1 -> 2: the funding-source buckets, which initSchema has just
	// created empty; no row moves.
	1: func(kv.Tx) error { return nil },
}

// allBuckets is every top-level bucket of the current layout.
var allBuckets = [][]byte{bucketMeta, bucketFiles, bucketBatches, bucketRows, bucketOpen, bucketTrack, bucketChecks,
	bucketNumbers, bucketJobs, bucketSrcRows, bucketSrcOpen, bucketSrcTrack, bucketSrcIDs}

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
	// MustExist refuses to create a ledger even in a fresh state
	// directory (ErrNoLedger), for callers that must never make one.
	// Without it, Open creates a ledger only where there is neither a
	// ledger nor the marker file (see MarkerName).
	MustExist bool
	// NoSnapshots leaves the snapshot socket (SocketName) unserved.
	NoSnapshots bool
	// SendWindow, when positive, gives each create intent a send-by
	// deadline (payment.Row.SendBy) that far after Send. A ledger shared
	// by instances under a leader lease needs it (see OpenStore); zero
	// sets none.
	SendWindow time.Duration
	// Holder names this instance in the leader lease (default
	// host:pid).
	Holder string
	// Watermark is the file where an instance of a shared ledger keeps
	// the highest write count it saw (watermark.go); "" keeps it in
	// memory only, and then a copy of the database rolled back in place
	// (which keeps its origin: rewind.go) is noticed only by an instance
	// that saw the lost writes since it started.
	Watermark string
	// AccountKeys seals the full account numbers of rows (acctseal);
	// nil reads AccountKeysFile (see accountKeys).
	AccountKeys *acctseal.Ring
	// AccountKeysFile names the key ring file; "" means the state
	// directory's (acctseal.FileName), made on first open.
	AccountKeysFile string
}

// DB is an open ledger. Its methods are safe for concurrent use.
type DB struct {
	// store holds the ledger; every rule reads and writes through it.
	store kv.Store
	// keys seal and open the rows' full account numbers (accountkeys.go);
	// a running instance swaps in its ring file's new contents
	// (UseAccountKeys), so it is read through ring.
	keys     atomic.Pointer[acctseal.Ring]
	keysMade string // AccountKeysMade
	// file is store when the ledger is a file, for the features only a
	// file has (snapshots, the marker); nil on any other store, where
	// they answer ErrUnsupported. It is set where the store is made, so
	// no capability is ever looked for at run time.
	file     *boltkv.Store
	path     string
	now      func() time.Time
	chunk    int
	instance string
	// sendWindow is Options.SendWindow.
	sendWindow time.Duration
	// elector and holder elect the leader (leader.go): a file's own
	// process, or a shared store's lease.
	elector Elector
	holder  string
	// mark is the watermark of a shared ledger (watermark.go); nil on a
	// file, which has no write count.
	mark *watermark
	// guards are the write transactions in progress whose database the
	// guard proved (rewind.go).
	guards txGuards

	mu      sync.Mutex // guards the commit counter and generation
	lastTx  int
	commits int64

	// rowsRead counts rows read since the store was last told to release
	// its mapped pages (release.go).
	rowsRead atomic.Int64

	// dir is the state directory when the DB was opened by Open, which
	// keeps the marker there up to date; "" for a snapshot or a copy.
	dir        string
	generation uint64   // as committed by the last bump
	previous   []string // earlier instances (see RestoreMark)
	snap       *boltkv.Server
	closeOnce  sync.Once
}

// ring is the key ring that seals and opens account numbers now.
func (d *DB) ring() *acctseal.Ring { return d.keys.Load() }

func (o *Options) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LoadChunk <= 0 {
		o.LoadChunk = 5000
	}
	if o.Holder == "" {
		host, _ := os.Hostname()
		o.Holder = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if o.GroupCommitDelay <= 0 {
		o.GroupCommitDelay = 2 * time.Millisecond
	}
}

// openDir is Open without sealing what an earlier build left in the
// clear: it opens the ledger in dir. It creates one (and the marker beside it)
// only in a fresh directory, one with neither a ledger nor a marker, and
// not at all with Options.MustExist. It refuses, with an error wrapping
// ErrUnusable that names the file and what is wrong, a ledger that is
// missing while the marker says one was made, empty, truncated, damaged
// (its whole tree is walked and checked before anything is written),
// another installation's, a snapshot, or an older copy of the one last
// used. The directory is created 0700 and the file forced to 0600.
//
// While it is open, the ledger serves consistent snapshots to `batchd
// backup` on the socket SocketName in dir (internal/state/bolt), unless
// Options.NoSnapshots.
func openDir(dir string, opts Options) (*DB, error) {
	opts.defaults()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open state: create %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	mk, hasMarker, mkErr := boltkv.ReadMarker(dir)
	_, statErr := os.Lstat(path)
	create := false
	switch {
	case statErr == nil:
	case !errors.Is(statErr, os.ErrNotExist):
		return nil, fmt.Errorf("open state %s: %w", path, statErr)
	case hasMarker && mkErr != nil:
		return nil, refusal(path, fmt.Sprintf("is missing, and the marker %s beside it cannot be read (%v)", filepath.Join(dir, MarkerName), mkErr))
	case hasMarker:
		return nil, refusal(path, fmt.Sprintf("is missing, but the marker %s says ledger instance %s was made here (last used %s): it was deleted, or state_dir points at the wrong place",
			filepath.Join(dir, MarkerName), mk.Instance, mk.Updated.UTC().Format(time.RFC3339)))
	case opts.MustExist:
		return nil, fmt.Errorf("open state %s: %w: the state directory has no ledger; `batchd init` creates one", path, ErrNoLedger)
	default:
		create = true
	}
	if mkErr != nil {
		hasMarker = false // a damaged marker beside a sound ledger is rewritten
	}
	d, err := openFile(path, opts, create, acceptInDir(path, mk, hasMarker, !opts.MustExist))
	if err != nil {
		return nil, err
	}
	d.dir = dir
	// The marker follows the ledger's first commit: a crash in between
	// leaves a ledger without a marker, which the next Open accepts.
	if err := d.writeMarker(); err != nil && create {
		d.store.Close()
		return nil, fmt.Errorf("open state %s: write the marker: %w", path, err)
	}
	if !opts.NoSnapshots {
		d.snap = d.file.Serve(filepath.Join(dir, SocketName), d.now)
	}
	return d, nil
}

// initSchema creates the buckets, stamps or checks the schema version and
// runs any migrations, all in one transaction.
func (d *DB) initSchema(tx kv.Tx) error {
	for _, name := range allBuckets {
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
		id, err := newInstance()
		if err != nil {
			return err
		}
		inst = []byte(id)
		if err := meta.Put(keyInstance, inst); err != nil {
			return err
		}
	}
	d.instance = string(inst)
	if raw := meta.Get(keyPrevious); raw != nil {
		if err := json.Unmarshal(raw, &d.previous); err != nil {
			return fmt.Errorf("previous instances: %w", err)
		}
	}
	gen := uint64(0)
	if raw := meta.Get(keyGeneration); len(raw) == 8 {
		gen = binary.BigEndian.Uint64(raw)
	}
	if err := meta.Put(keyGeneration, u64(gen+1)); err != nil {
		return err
	}
	tx.OnCommit(func() {
		d.mu.Lock()
		d.generation = gen + 1
		d.mu.Unlock()
	})
	return nil
}

// Path names the ledger for messages: the database file's path, or the
// server a shared ledger is on.
func (d *DB) Path() string {
	if d.file == nil && d.store != nil {
		// A shared store names the server its last transaction reached:
		// after a failover, not the one the ledger was opened on.
		return d.store.Name()
	}
	return d.path
}

// Instance is a short random identifier of this ledger, made when it was
// created. It goes into the labels batchd assigns, so that two
// installations (or a state directory made anew) never share a label.
func (d *DB) Instance() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.instance
}

// setInstance changes the instance after a restore of a shared ledger.
func (d *DB) setInstance(inst string) {
	d.mu.Lock()
	d.instance = inst
	d.mu.Unlock()
}

// Close stops serving snapshots, records the ledger's generation in the
// marker and closes the database. A second Close does nothing more.
func (d *DB) Close() error {
	d.closeOnce.Do(func() {
		d.snap.Stop()
		if d.dir != "" {
			// Best effort: a ledger that cannot be written (a full
			// disk) keeps the marker it has, which is never ahead.
			if d.bumpGeneration(nil) == nil {
				_ = d.writeMarker()
			}
		}
	})
	d.mark.close()
	return d.store.Close()
}

// bumpGeneration raises the ledger's generation in a transaction of its
// own, or within tx when one is given.
func (d *DB) bumpGeneration(tx kv.Tx) error {
	bump := func(tx kv.Tx) error {
		meta := tx.Bucket(bucketMeta)
		gen := uint64(0)
		if raw := meta.Get(keyGeneration); len(raw) == 8 {
			gen = binary.BigEndian.Uint64(raw)
		}
		tx.OnCommit(func() {
			d.mu.Lock()
			d.generation = gen + 1
			d.mu.Unlock()
		})
		return meta.Put(keyGeneration, u64(gen+1))
	}
	if tx != nil {
		return bump(tx)
	}
	return d.update(bump)
}

// writeMarker records this ledger's instance and generation beside it.
func (d *DB) writeMarker() error {
	if d.dir == "" {
		return nil
	}
	d.mu.Lock()
	m := marker{Instance: d.instance, Generation: d.generation, Previous: d.previous, Updated: time.Now().UTC()}
	d.mu.Unlock()
	return boltkv.WriteMarker(d.dir, m)
}

// newInstance makes a ledger's instance id (see Instance): six random
// hex digits, made anew when a ledger is created or restored.
func newInstance() (string, error) {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make an instance id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

// update runs fn in a write transaction and counts the commit.
func (d *DB) update(fn func(kv.Tx) error) error { return d.writeWith(d.store.Update, fn, false) }

// updateUnfenced is update without the leader lease's check (see
// kv.Store.UpdateUnfenced): only for writes a standby instance may make.
func (d *DB) updateUnfenced(fn func(kv.Tx) error) error {
	return d.writeWith(d.store.UpdateUnfenced, fn, false)
}

// batch runs fn through the store's group commit and counts the commit
// once per transaction, however many callers shared it.
func (d *DB) batch(fn func(kv.Tx) error) error { return d.writeWith(d.store.Batch, fn, false) }

// writeWith runs fn through one of the store's write paths (run): it
// counts the commit and, on a shared ledger, first proves that the
// database has not gone back in time and raises the write count the
// watermark follows (rewind.go's guard; recovering: the restore rules'
// own writes, which skip the proof).
func (d *DB) writeWith(run func(func(kv.Tx) error) error, fn func(kv.Tx) error, recovering bool) (err error) {
	defer d.recoverDamage("write", &err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var txs []int // the transactions fn ran in; ended once run returns
	defer func() {
		for _, id := range txs {
			d.guards.done(id)
		}
	}()
	return d.fail("write", run(func(tx kv.Tx) error {
		// bbolt's Batch may run fn on a goroutine of its own; there too a
		// fault reading a damaged page is a panic, which bbolt's Batch
		// recovers and returns as an error.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		tx.OnCommit(d.counter(tx))
		if d.file == nil {
			txs = append(txs, tx.ID())
			if err := d.guard(tx, recovering); err != nil {
				return err
			}
		}
		return fn(tx)
	}))
}

// view runs fn in a read transaction.
func (d *DB) view(fn func(kv.Tx) error) (err error) {
	defer d.recoverDamage("read", &err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return d.fail("read", d.store.View(fn))
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
	// bbolt's Batch returns a panic of its transaction as an error
	// reading "panic: …": that is a damaged page too.
	if msg := err.Error(); strings.HasPrefix(msg, "panic: ") {
		err = damagedErr(strings.TrimPrefix(msg, "panic: "))
	}
	// bbolt's own error names the file again; the message names it once.
	if pe, ok := err.(*fs.PathError); ok && pe.Path == d.path {
		err = fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return &payment.LedgerError{Op: op, Path: d.Path(), Err: err}
}

// recoverDamage turns a panic inside bbolt, which is how it meets a
// damaged page ("invalid freelist page", a truncated file), into a ledger
// error: batchd never ends in a panic on a damaged ledger. bbolt rolls the
// transaction back on its way out.
func (d *DB) recoverDamage(op string, err *error) {
	if r := recover(); r != nil {
		*err = &payment.LedgerError{Op: op, Path: d.Path(), Err: damagedErr(fmt.Sprint(r))}
	}
}

// damagedErr says that the file is damaged, and what to do.
func damagedErr(cause string) error {
	return fmt.Errorf("the ledger file is damaged (%s); stop batchd and keep the file for inspection; "+
		"run `batchd check` for a diagnosis and install the last good snapshot with `batchd restore --from SNAPSHOT`", cause)
}

func (d *DB) counter(tx kv.Tx) func() {
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

// The ledger is the domain's Ledger and funding's, and a Loader their
// Loader.
var (
	_ payment.Ledger = (*DB)(nil)
	_ payment.Loader = (*Loader)(nil)
	_ funding.Ledger = (*DB)(nil)
	_ funding.Loader = (*Loader)(nil)
)
