package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	boltkv "github.com/batchd/batchd/internal/state/bolt"
	"github.com/batchd/batchd/internal/state/kv"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// A damaged or missing ledger is refused, never reset. Open creates a new
// ledger only in a fresh state directory: one with neither a ledger nor
// the marker file that every ledger leaves beside itself when it is made.
// Everything else that is not a whole, readable batchd ledger (a marker
// without a ledger, a 0-byte, truncated or unreadable file, a snapshot put
// in place with cp, an older copy put back over a newer ledger) is an
// error wrapping ErrUnusable that names the file and what is wrong.

// MarkerName is the marker file in the state directory. It records that a
// ledger was created there, its instance and its generation (see
// keyGeneration); it is small, rewritten atomically, and must not be
// deleted.
const MarkerName = ".batchd-ledger"

// ErrUnusable is wrapped by Open's refusals of a ledger it will not use:
// missing while the marker says one existed, empty, truncated, damaged,
// another installation's, a snapshot, or older than the one last used.
var ErrUnusable = errors.New("the ledger cannot be used")

// ErrNoLedger is wrapped when the state directory holds no ledger at all
// and Options.MustExist forbids making one.
var ErrNoLedger = errors.New("no ledger")

var (
	// keyGeneration counts the opens and recorded successes of the
	// ledger; the marker keeps the value last seen, so an older copy of
	// the file put back in place (whose generation is lower) is refused.
	keyGeneration = []byte("generation")
	// keySnapshotAt is set only in a snapshot written by Backup: the time
	// of the read transaction it copies. Restore reads and removes it; a
	// file that has it is never opened as the live ledger.
	keySnapshotAt = []byte("snapshot_at")
	// keySnapshotOf is the ledger path a snapshot was taken of.
	keySnapshotOf = []byte("snapshot_of")
	// keyRestored is the restored mark (RestoreMark, JSON).
	keyRestored = []byte("restored")
	// keyPrevious lists earlier instances of this ledger (JSON array),
	// which a restore replaces so that new batches never reuse a label
	// that a lost batch may have carried.
	keyPrevious = []byte("previous_instances")
)

// refusal builds the error for a ledger Open will not use.
func refusal(path, what string) error {
	return fmt.Errorf("%w: %s %s. batchd never starts a new ledger over a lost or damaged one: "+
		"run `batchd check` for a diagnosis and `batchd restore --from SNAPSHOT` to install the last good snapshot", ErrUnusable, path, what)
}

// metaInfo is what the file's own header (the bbolt meta pages) says.
type metaInfo struct {
	pageSize int
	pgid     uint64 // high-water mark: pages [0, pgid) must be in the file
	txid     uint64
	root     uint64
	freelist uint64
}

// The layout of a bbolt meta page: a 16-byte page header, then magic,
// version, page size, flags (uint32 each), the root bucket (pgid,
// sequence), the freelist pgid, the high-water pgid, the txid and an
// FNV-64a checksum of everything from magic to txid. bbolt writes it in
// the machine's byte order.
const (
	metaOffset   = 16
	metaSumStart = metaOffset
	metaSumEnd   = metaOffset + 56
	metaLen      = metaOffset + 64
	boltMagic    = 0xED0CDAED
	boltVersion  = 2
	noFreelist   = ^uint64(0)
)

func parseMeta(b []byte) (metaInfo, error) {
	if len(b) < metaLen {
		return metaInfo{}, errors.New("short")
	}
	ne := binary.NativeEndian
	if ne.Uint16(b[8:]) != 0x04 { // page flags: meta
		return metaInfo{}, errors.New("not a meta page")
	}
	if ne.Uint32(b[metaOffset:]) != boltMagic {
		return metaInfo{}, errors.New("bad magic")
	}
	if v := ne.Uint32(b[metaOffset+4:]); v != boltVersion {
		return metaInfo{}, fmt.Errorf("format version %d", v)
	}
	h := fnv.New64a()
	h.Write(b[metaSumStart:metaSumEnd])
	if h.Sum64() != ne.Uint64(b[metaSumEnd:]) {
		return metaInfo{}, errors.New("checksum mismatch")
	}
	m := metaInfo{
		pageSize: int(ne.Uint32(b[metaOffset+8:])),
		root:     ne.Uint64(b[metaOffset+16:]),
		freelist: ne.Uint64(b[metaOffset+32:]),
		pgid:     ne.Uint64(b[metaOffset+40:]),
		txid:     ne.Uint64(b[metaOffset+48:]),
	}
	if m.pageSize < 512 || m.pageSize > 1<<20 || m.pageSize&(m.pageSize-1) != 0 {
		return metaInfo{}, fmt.Errorf("page size %d", m.pageSize)
	}
	return m, nil
}

// preflight reads the file's header before bbolt maps it: bbolt turns a
// 0-byte file into a new empty database, and maps a truncated one and
// faults on the pages that are missing. It returns a plain description
// of what is wrong, or nil.
func preflight(path string) (metaInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return metaInfo{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return metaInfo{}, err
	}
	size := fi.Size()
	if !fi.Mode().IsRegular() {
		return metaInfo{}, errors.New("is not a regular file")
	}
	if size == 0 {
		return metaInfo{}, errors.New("is empty (0 bytes)")
	}
	head := make([]byte, 4096)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return metaInfo{}, fmt.Errorf("cannot be read: %w", err)
	}
	head = head[:n]
	m0, err0 := parseMeta(head)
	ps := 4096
	if err0 == nil {
		ps = m0.pageSize
	}
	second := make([]byte, metaLen)
	var err1 error
	var m1 metaInfo
	if k, rerr := f.ReadAt(second, int64(ps)); rerr != nil && !(errors.Is(rerr, io.EOF) && k == len(second)) {
		err1 = errors.New("missing")
	} else {
		m1, err1 = parseMeta(second)
	}
	var m metaInfo
	switch {
	case err0 == nil && err1 == nil:
		m = m0
		if m1.txid > m0.txid {
			m = m1
		}
	case err0 == nil:
		m = m0
	case err1 == nil:
		m = m1
	default:
		if size < int64(2*ps) {
			return metaInfo{}, fmt.Errorf("is too short to be a ledger (%d bytes) and has no valid header: it was truncated or is not a batchd ledger", size)
		}
		return metaInfo{}, fmt.Errorf("has no valid header (first header: %v; second: %v): it is damaged or not a batchd ledger", err0, err1)
	}
	if m.root >= m.pgid || (m.freelist != noFreelist && m.freelist >= m.pgid) {
		return metaInfo{}, fmt.Errorf("has a header that points past its own end (root page %d, freelist page %d, %d pages): it is damaged", m.root, m.freelist, m.pgid)
	}
	if need := int64(m.pgid) * int64(m.pageSize); size < need {
		return metaInfo{}, fmt.Errorf("is truncated: it holds %d bytes, but its header says the ledger spans %d (%d pages of %d bytes)", size, need, m.pgid, m.pageSize)
	}
	if err := checkFreelist(f, m, size); err != nil {
		return metaInfo{}, fmt.Errorf("is damaged: %w", err)
	}
	return m, nil
}

// verify checks the header and walks the tree of the file at path, which
// the caller has locked: nothing writes it meanwhile.
func verify(path string) error {
	m, err := preflight(path)
	if err != nil {
		return err
	}
	if err := walkPages(path, m); err != nil {
		return fmt.Errorf("is damaged: %w", err)
	}
	return nil
}

// lockedByOther reports whether another process holds path's lock for
// writing: what preflight read may then have been mid-write, and the
// answer is "locked", not "damaged".
func lockedByOther(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// damage is a panic inside bbolt (or a memory fault reading the mapped
// file) turned into an error.
type damage struct{ v any }

func (d damage) Error() string { return fmt.Sprintf("the file is damaged (%v)", d.v) }

// guarded runs fn with memory faults turned into panics and any panic
// into a damage error. bbolt meets a damaged page by panicking, and a
// pointer to a page past the end of the mapped file by faulting, which
// without SetPanicOnFault ends the process.
func guarded(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = damage{r}
		}
	}()
	return fn()
}

// boltOpen opens path with bbolt, turning a panic while bbolt reads the
// file (its freelist, say) into an error and closing the file (and so its
// lock) behind it.
func boltOpen(path string, o bolt.Options) (*bolt.DB, error) {
	var f *os.File
	o.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		ff, err := os.OpenFile(name, flag, perm)
		if f == nil && err == nil {
			f = ff // the data file is the first one bbolt opens
		}
		return ff, err
	}
	o.PreLoadFreelist = true // read it now, under guard, not later in a goroutine of bbolt's
	var b *bolt.DB
	err := guarded(func() (err error) {
		b, err = bolt.Open(path, 0o600, &o)
		return err
	})
	var dmg damage
	if errors.As(err, &dmg) && f != nil {
		f.Close()
	}
	return b, err
}

// structure walks every bucket of tx, touching every key and value (and
// so every branch, leaf and overflow page), under guard; and only if that
// walk is sound, runs bbolt's own consistency check (tx.Check). A walk
// that faults stops at the first fault: tx.Check runs in a goroutine of
// its own, where a fault could not be caught. It returns the problems
// found, at most limit of them.
//
// Both read the whole file through bbolt's memory map, so both hand the
// pages back as they go (kv.Tx.Release): else the whole file is counted in
// the RSS of every process that opens it, reconcile's among them.
func structure(tx *bolt.Tx, limit int) []string {
	release := boltkv.Tx(tx).Release
	defer release()
	var faults []string
	n := 0
	err := guarded(func() error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			return touch(b, &n, release)
		})
	})
	if err != nil {
		return []string{"cannot read the file's tree: " + err.Error()}
	}
	stop := releaseMeanwhile(release)
	defer stop()
	for e := range tx.Check() {
		if len(faults) < limit {
			// bbolt reports a panic of its check as "panic: …".
			faults = append(faults, strings.Replace(e.Error(), "panic: ", "bbolt stopped: ", 1))
		}
	}
	return faults
}

// releaseMeanwhile calls release every 2 ms until the returned stop is
// called, which waits for the last call: tx.Check reads the whole file in
// a goroutine of bbolt's, with no hook to hint from. The caller's read
// transaction must stay open until stop returns. The ticker only paces a
// memory hint; nothing is decided on the clock.
func releaseMeanwhile(release func()) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Millisecond) // the check reads a few MB in that time
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				release()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// touch reads every key and value of b and of the buckets in it, giving
// the hint release every touchRelease bytes of keys and values read (n
// counts them). The walk reads the file in key order, page after page, so
// the bytes it read are about the pages it brought into the mapping.
func touch(b *bolt.Bucket, n *int, release func()) error {
	var sink byte
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if *n += len(k) + len(v); *n >= touchRelease {
			*n = 0
			release()
		}
		sink ^= k[0] ^ k[len(k)-1]
		if v == nil {
			if child := b.Bucket(k); child != nil {
				if err := touch(child, n, release); err != nil {
					return err
				}
			}
			continue
		}
		if len(v) > 0 {
			sink ^= v[0] ^ v[len(v)-1]
		}
	}
	_ = sink
	return nil
}

// identity is what a ledger says about itself, read before Open changes
// anything.
type identity struct {
	empty      bool // no bucket at all: a creation that never finished
	batchd     bool // has the meta bucket and an instance
	instance   string
	generation uint64
	snapshotAt time.Time
	previous   []string
}

func readIdentity(tx kv.Tx) (identity, error) {
	var id identity
	err := guarded(func() error {
		n := 0
		_ = tx.ForEachBucket(func([]byte) error { n++; return nil })
		id.empty = n == 0
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return nil
		}
		inst := meta.Get(keyInstance)
		id.batchd = len(inst) > 0
		id.instance = string(inst)
		if raw := meta.Get(keyGeneration); len(raw) == 8 {
			id.generation = binary.BigEndian.Uint64(raw)
		}
		if raw := meta.Get(keySnapshotAt); raw != nil {
			if err := id.snapshotAt.UnmarshalText(raw); err != nil {
				return fmt.Errorf("snapshot time: %w", err)
			}
		}
		if raw := meta.Get(keyPrevious); raw != nil {
			if err := json.Unmarshal(raw, &id.previous); err != nil {
				return fmt.Errorf("previous instances: %w", err)
			}
		}
		return nil
	})
	return id, err
}

// marker is the content of the marker file.
type marker struct {
	Instance   string `json:"instance"`
	Generation uint64 `json:"generation"`
	// Previous lists the instances this ledger had before restores.
	Previous []string  `json:"previous,omitempty"`
	Updated  time.Time `json:"updated"`
	Note     string    `json:"note"`
}

const markerNote = "batchd's record that a ledger (batchd.db) exists in this directory; do not delete it. See batchd check / batchd restore."

// readMarker returns the marker in dir; ok is false when there is none.
func readMarker(dir string) (m marker, ok bool, err error) {
	raw, err := os.ReadFile(filepath.Join(dir, MarkerName))
	if errors.Is(err, os.ErrNotExist) {
		return marker{}, false, nil
	}
	if err != nil {
		return marker{}, true, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return marker{}, true, fmt.Errorf("unreadable marker: %w", err)
	}
	return m, true, nil
}

// writeMarker replaces the marker atomically: a temporary file, fsync,
// rename, fsync of the directory.
func writeMarker(dir string, m marker) error {
	m.Note = markerNote
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, MarkerName), append(raw, '\n'))
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, fsyncs it, renames it over path and fsyncs the directory.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp-" + strconv.Itoa(os.Getpid())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// openFile opens the bbolt file at path: it checks the header first,
// opens under guard, and walks the whole tree (refusing a damaged one)
// before anything is written. accept sees what the file says of itself
// and may refuse it. The file must exist unless create is set.
func openFile(path string, opts Options, create bool, accept func(identity) error) (*DB, error) {
	if !create {
		if _, err := preflight(path); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("open state %s: %w", path, err)
			}
			if lockedByOther(path) {
				return nil, fmt.Errorf("open state %s: %w; stop the other process or point state_dir elsewhere", path, ErrLocked)
			}
			return nil, refusal(path, err.Error())
		}
	}
	b, err := boltOpen(path, bolt.Options{Timeout: opts.Timeout})
	if errors.Is(err, bolterrors.ErrInvalid) {
		// The file this open waited on may have been replaced meanwhile
		// (a compaction renames a new file over the ledger and spoils
		// the old one's header): open the one the path names now, once.
		if _, perr := preflight(path); perr == nil {
			b, err = boltOpen(path, bolt.Options{Timeout: opts.Timeout})
		}
	}
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("open state %s: %w (waited %s); stop the other process or point state_dir elsewhere", path, ErrLocked, opts.Timeout)
	}
	if err != nil {
		if errors.Is(err, bolterrors.ErrInvalid) || errors.Is(err, bolterrors.ErrChecksum) || errors.Is(err, bolterrors.ErrVersionMismatch) || errors.As(err, new(damage)) {
			return nil, refusal(path, "cannot be opened: "+err.Error())
		}
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		b.Close()
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	var (
		faults []string
		id     identity
	)
	if err := verify(path); err != nil {
		b.Close()
		return nil, refusal(path, err.Error())
	}
	err = b.View(func(tx *bolt.Tx) error {
		faults = structure(tx, 5)
		if len(faults) > 0 {
			return nil
		}
		var err error
		id, err = readIdentity(boltkv.Tx(tx))
		return err
	})
	if err == nil && len(faults) > 0 {
		err = fmt.Errorf("is damaged: %s", faults[0])
		if len(faults) > 1 {
			err = fmt.Errorf("%w (and %d more faults)", err, len(faults)-1)
		}
	}
	if err == nil && accept != nil {
		err = accept(id)
	}
	if err != nil {
		b.Close()
		if errors.Is(err, ErrUnusable) || errors.Is(err, ErrNoLedger) {
			return nil, err
		}
		return nil, refusal(path, err.Error())
	}
	b.MaxBatchDelay = opts.GroupCommitDelay
	d := &DB{store: boltkv.New(b), bolt: b, path: path, now: opts.Now, chunk: opts.LoadChunk, sendWindow: opts.SendWindow,
		elector: fileLeader{holder: opts.Holder}, holder: opts.Holder}
	if err := guarded(func() error { return d.store.UpdateUnfenced(d.initSchema) }); err != nil {
		b.Close()
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	if err := d.discardLoading(); err != nil {
		b.Close()
		return nil, fmt.Errorf("open state %s: discard half-loaded batches: %w", path, err)
	}
	return d, nil
}

// acceptInDir decides whether the ledger found in dir may be used, given
// the marker beside it. It is the guard against a file replaced behind
// batchd's back: another installation's ledger, a snapshot or an older
// copy put in place with cp, or an empty file.
func acceptInDir(path string, mk marker, hasMarker, mayCreate bool) func(identity) error {
	return func(id identity) error {
		switch {
		case id.empty && !hasMarker && mayCreate:
			return nil // a creation that stopped before its first commit
		case id.empty:
			return refusal(path, "holds no data at all, but the marker "+MarkerName+" says a ledger was made here: it was replaced by an empty file")
		case !id.batchd:
			return refusal(path, "is a bbolt file but not a batchd ledger (it has no instance)")
		case !id.snapshotAt.IsZero():
			return refusal(path, fmt.Sprintf("is a snapshot taken at %s, put in place by hand: install a snapshot with `batchd restore --from FILE`, which puts its unfinished rows in doubt so that nothing is paid twice",
				id.snapshotAt.UTC().Format(time.RFC3339)))
		case !hasMarker:
			return nil
		case mk.Instance != id.instance && !slices.Contains(id.previous, mk.Instance) && !slices.Contains(mk.Previous, id.instance):
			return refusal(path, fmt.Sprintf("belongs to ledger instance %s, but the marker %s says this directory's ledger is instance %s: the file was replaced by another installation's",
				id.instance, MarkerName, mk.Instance))
		case mk.Instance == id.instance && id.generation < mk.Generation:
			return refusal(path, fmt.Sprintf("is an older copy of this ledger (generation %d; the marker %s says batchd last used generation %d): a copy was put back by hand. Installing a copy with `batchd restore --from FILE` puts its unfinished rows in doubt so that nothing is paid twice",
				id.generation, MarkerName, mk.Generation))
		}
		return nil
	}
}
