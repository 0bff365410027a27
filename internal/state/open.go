package state

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	boltkv "github.com/batchd/batchd/internal/state/bolt"
	"github.com/batchd/batchd/internal/state/kv"
)

// A damaged or missing ledger is refused, never reset. Open creates a new
// ledger only in a fresh state directory: one with neither a ledger nor
// the marker file that every ledger leaves beside itself when it is made.
// Everything else that is not a whole, readable batchd ledger (a marker
// without a ledger, a 0-byte, truncated or unreadable file, a snapshot put
// in place with cp, an older copy put back over a newer ledger) is an
// error wrapping ErrUnusable that names the file and what is wrong.
//
// The file's mechanics (its header, page walk, lock, marker file,
// snapshots and compaction) are internal/state/bolt's; the rules of which
// ledger may be used (identity, acceptInDir) are here.

// MarkerName is the marker file in the state directory. It records that a
// ledger was created there, its instance and its generation (see
// keyGeneration); it is small, rewritten atomically, and must not be
// deleted.
const MarkerName = boltkv.MarkerName

// marker is the content of the marker file.
type marker = boltkv.Marker

var (
	// ErrLocked is returned by Open when another process holds the
	// database.
	ErrLocked = boltkv.ErrLocked
	// ErrUnusable is wrapped by Open's refusals of a ledger it will not
	// use: missing while the marker says one existed, empty, truncated,
	// damaged, another installation's, a snapshot, or older than the one
	// last used.
	ErrUnusable = boltkv.ErrUnusable
	// ErrNoLedger is wrapped when the state directory holds no ledger at
	// all and Options.MustExist forbids making one.
	ErrNoLedger = boltkv.ErrNoLedger
)

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
func refusal(path, what string) error { return boltkv.Refusal(path, what) }

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

// readIdentity reads what the ledger in tx says of itself. Its callers
// run it under guard: a damaged page panics.
func readIdentity(tx kv.Tx) (identity, error) {
	var id identity
	n := 0
	_ = tx.ForEachBucket(func([]byte) error { n++; return nil })
	id.empty = n == 0
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return id, nil
	}
	inst := meta.Get(keyInstance)
	id.batchd = len(inst) > 0
	id.instance = string(inst)
	if raw := meta.Get(keyGeneration); len(raw) == 8 {
		id.generation = binary.BigEndian.Uint64(raw)
	}
	if raw := meta.Get(keySnapshotAt); raw != nil {
		if err := id.snapshotAt.UnmarshalText(raw); err != nil {
			return id, fmt.Errorf("snapshot time: %w", err)
		}
	}
	if raw := meta.Get(keyPrevious); raw != nil {
		if err := json.Unmarshal(raw, &id.previous); err != nil {
			return id, fmt.Errorf("previous instances: %w", err)
		}
	}
	return id, nil
}

// openFile opens the ledger file at path (internal/state/bolt checks the
// file's header and tree before anything is written). accept sees what
// the file says of itself and may refuse it. The file must exist unless
// create is set.
func openFile(path string, opts Options, create bool, accept func(identity) error) (*DB, error) {
	file, err := boltkv.Open(path, boltkv.Options{Timeout: opts.Timeout, GroupCommitDelay: opts.GroupCommitDelay, Create: create},
		func(tx kv.Tx) error {
			id, err := readIdentity(tx)
			if err == nil && accept != nil {
				err = accept(id)
			}
			return err
		})
	if err != nil {
		return nil, err
	}
	keys, made, err := accountKeys(opts, filepath.Dir(path))
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	d := &DB{store: file, file: file, path: path, now: opts.Now, chunk: opts.LoadChunk, sendWindow: opts.SendWindow,
		elector: fileLeader{holder: opts.Holder}, holder: opts.Holder, keysMade: made}
	d.keys.Store(keys)
	if err := boltkv.Guarded(func() error { return d.store.UpdateUnfenced(d.initSchema) }); err != nil {
		file.Close()
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	if err := d.discardLoading(); err != nil {
		file.Close()
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
