package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/state/kv"
)

// The watermark: what one instance of a shared ledger has seen of the
// ledger's write count (meta "writes", raised by every write transaction:
// rewind.go's guard). It is kept in memory, and in a file in the
// instance's state directory, so that a restarted instance still knows
// it. The leader records it after each commit, and the file is synced
// before the call returns, so no create leaves before its intent's count
// is on this host's disk; a standby refreshes it each time it reads the
// lease. A write that finds the ledger's count below it is refused
// (rewind.go). The file is one defence among others: a database that was
// promoted, recovered to a point in time or restored from a dump is known
// by its origin whatever the file says, so a missing or stale file only
// weakens the defence against a copy rolled back in place, which keeps
// its origin (docs/ops-ha.md).

var keyWrites = []byte("writes")

// watermarkFile is what one instance remembers of a shared ledger.
type watermarkFile struct {
	Instance string    `json:"instance"`
	Writes   uint64    `json:"writes"`
	At       time.Time `json:"at"` // when this instance last saw Writes
}

// watermark keeps the highest count seen, and writes the file after
// commits when it has one. Its methods are safe for concurrent use.
type watermark struct {
	path string // "" keeps no file
	now  func() time.Time
	mu   sync.Mutex
	last watermarkFile
	f    *os.File // open for writing in place; nil until the first record
}

// watermarkSize is the file's fixed size: the JSON, padded with spaces,
// rewritten in place and synced (fdatasync of one block), not renamed,
// so that a commit costs one small write and no directory update. A host
// that loses its page cache comes back with the last count synced, which
// is at least the count of every intent whose create left.
const watermarkSize = 256

// seen is the highest count this instance has seen.
func (w *watermark) seen() watermarkFile {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// record keeps n as the watermark when it is higher. A file that cannot
// be written is left as it was: the count in memory still guards this
// process, and the next instance on this host starts from an older one.
func (w *watermark) record(instance string, n uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last.Instance == instance && n <= w.last.Writes {
		return
	}
	w.last = watermarkFile{Instance: instance, Writes: n, At: w.now().UTC()}
	if w.path == "" {
		return
	}
	raw, _ := json.Marshal(w.last)
	if len(raw) >= watermarkSize {
		return // an instance id is six hex digits; this never happens
	}
	if w.f == nil {
		f, err := os.OpenFile(w.path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return
		}
		w.f = f
	}
	if _, err := w.f.WriteAt(append(raw, bytes.Repeat([]byte{' '}, watermarkSize-len(raw))...), 0); err == nil {
		_ = w.f.Sync()
	}
}

// close releases the file.
func (w *watermark) close() {
	if w == nil {
		return // a file's ledger keeps no watermark
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}

// read returns the file's content; ok is false when there is none.
func (w *watermark) read() (watermarkFile, bool, error) {
	if w.path == "" {
		return watermarkFile{}, false, nil
	}
	raw, err := os.ReadFile(w.path)
	if errors.Is(err, os.ErrNotExist) {
		return watermarkFile{}, false, nil
	}
	if err != nil {
		return watermarkFile{}, false, err
	}
	var f watermarkFile
	if err := json.Unmarshal(bytes.TrimRight(raw, " \x00"), &f); err != nil {
		return watermarkFile{}, false, fmt.Errorf("%s: %w", w.path, err)
	}
	return f, true, nil
}

// Refresh raises this instance's watermark to the ledger's write count;
// a standby calls it each time it reads the lease.
func (d *DB) Refresh() error {
	if d.file != nil {
		return nil
	}
	inst, n, err := d.writes()
	if err != nil {
		return err
	}
	d.mark.record(inst, n)
	return nil
}

func (d *DB) writes() (instance string, n uint64, err error) {
	err = d.view(func(tx kv.Tx) error {
		meta := tx.Bucket(bucketMeta)
		instance, n = string(meta.Get(keyInstance)), writeCount(meta)
		return nil
	})
	return instance, n, err
}

// MarkRestored applies the restore rules to a shared ledger that the
// operator's tools put back to the moment at (a point-in-time recovery
// target, or the time of the dump): every row without a check, and every
// funding row without a result, goes in doubt with its attempt no later
// than at, to be looked up before any send; the ledger gets a new
// instance id; and the restored mark is set until a reconcile covering
// at completes. It must run with no other instance working (the caller
// holds the lease). from says what was restored, for the mark.
func (d *DB) MarkRestored(at time.Time, from string) (*RestoreMark, error) {
	if d.file != nil {
		return nil, Unsupported("mark restored", "the ledger is a file: restore it with `batchd restore --from SNAPSHOT`, which applies the same rules")
	}
	now := d.now().UTC()
	mark := RestoreMark{SnapshotAt: at.UTC(), RestoredAt: now, From: from, PreviousInstance: d.Instance()}
	// The restore rules' own writes: the database restored has another
	// origin, or lost writes, which the guard would refuse.
	n, err := d.suspectAll(d.recovery, at, now.Add(d.sendWindow), "restored from a snapshot taken at "+at.UTC().Format(time.RFC3339))
	if err != nil {
		return nil, fmt.Errorf("mark %s restored: %w", d.Path(), err)
	}
	mark.RowsInDoubt = n
	if err := d.finishRestore(d.recovery, &mark, 0); err != nil {
		return nil, fmt.Errorf("mark %s restored: %w", d.Path(), err)
	}
	d.replaced(mark)
	return &mark, nil
}

// replaced notes, after a restore of a shared ledger, its new instance
// id and the one it replaced.
func (d *DB) replaced(mark RestoreMark) {
	d.mu.Lock()
	d.previous = slices.Clone(append(d.previous, mark.PreviousInstance))
	d.instance = mark.Instance
	d.mu.Unlock()
}

// previousInstances are the instance ids restores replaced.
func (d *DB) previousInstances() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.previous
}
