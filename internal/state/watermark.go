package state

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/state/kv"
)

// A shared ledger (PostgreSQL) is backed up and restored by the operator's
// tools (pg_dump, point-in-time recovery), which batchd does not see. A
// database put back in time forgets rows sent since, and a batchd that
// trusted it would send them again. So on a shared ledger every write
// transaction raises a counter in the ledger (meta "writes"), and every
// instance keeps, in its state directory, the highest count it has seen
// committed (the watermark). The leader writes it after each commit and
// before the call returns, so no create leaves before its intent's count
// is in the file; a standby refreshes it each time it reads the lease.
// When an instance takes over and finds the ledger's counter below its
// watermark, the database went back in time: it applies the restore rules
// (every row without a check, and every funding row without a result,
// in doubt and looked up before any send; a new instance id) before any
// job runs. A restore to a point after the last watermark an instance
// saw is not detected this way; the operator then says it with `batchd
// mark-restored` (README, Operating guide).

var keyWrites = []byte("writes")

// watermarkFile is what one instance remembers of a shared ledger.
type watermarkFile struct {
	Instance string    `json:"instance"`
	Writes   uint64    `json:"writes"`
	At       time.Time `json:"at"` // when this instance last saw Writes
}

// watermark writes the file after commits. Its methods are safe for
// concurrent use.
type watermark struct {
	path string
	now  func() time.Time
	mu   sync.Mutex
	last watermarkFile
	f    *os.File // open for writing in place; nil until the first record
}

// watermarkSize is the file's fixed size: the JSON, padded with spaces,
// rewritten in place so that a commit costs one small write to the page
// cache, not an fsync and a rename. A process that dies keeps what it
// wrote; a host that loses its page cache may come back with an older
// count, which only makes detection later, never wrong.
const watermarkSize = 256

// bumpWrites raises the ledger's write counter in tx and, after the
// commit, the watermark.
func (d *DB) bumpWrites(tx kv.Tx) error {
	meta := tx.Bucket(bucketMeta)
	n := uint64(0)
	if raw := meta.Get(keyWrites); len(raw) == 8 {
		n = binary.BigEndian.Uint64(raw)
	}
	n++
	if err := meta.Put(keyWrites, u64(n)); err != nil {
		return err
	}
	tx.OnCommit(func() { d.mark.record(d.Instance(), n) })
	return nil
}

// record keeps n as the watermark when it is higher. A file that cannot
// be written is left as it was: detection then works from an older
// count, which is never unsafe, only later.
func (w *watermark) record(instance string, n uint64) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last.Instance == instance && n <= w.last.Writes {
		return
	}
	w.last = watermarkFile{Instance: instance, Writes: n, At: w.now().UTC()}
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
	_, _ = w.f.WriteAt(append(raw, bytes.Repeat([]byte{' '}, watermarkSize-len(raw))...), 0)
}

// close releases the file.
func (w *watermark) close() {
	if w == nil {
		return
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
	if d.mark == nil {
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
		instance = string(meta.Get(keyInstance))
		if raw := meta.Get(keyWrites); len(raw) == 8 {
			n = binary.BigEndian.Uint64(raw)
		}
		return nil
	})
	return instance, n, err
}

// wentBack compares the ledger with this instance's watermark: it returns
// the watermark when the ledger's write count is below it, so the
// database was put back in time, and nil otherwise.
func (d *DB) wentBack() (*watermarkFile, error) {
	if d.mark == nil {
		return nil, nil
	}
	f, ok, err := d.mark.read()
	if err != nil || !ok {
		return nil, err
	}
	inst, n, err := d.writes()
	if err != nil {
		return nil, err
	}
	if f.Instance != inst {
		// Another ledger, or this one restored since (its old instance
		// in the previous list): the file says nothing of it.
		return nil, nil
	}
	if n < f.Writes {
		return &f, nil
	}
	return nil, nil
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
	if d.bolt != nil {
		return nil, Unsupported("mark restored", "the ledger is a file: restore it with `batchd restore --from SNAPSHOT`, which applies the same rules")
	}
	mark := RestoreMark{SnapshotAt: at.UTC(), RestoredAt: d.now().UTC(), From: from, PreviousInstance: d.Instance()}
	n, err := d.suspectAll(at)
	if err != nil {
		return nil, fmt.Errorf("mark %s restored: %w", d.path, err)
	}
	mark.RowsInDoubt = n
	if err := d.finishRestore(&mark, 0); err != nil {
		return nil, fmt.Errorf("mark %s restored: %w", d.path, err)
	}
	d.mu.Lock()
	d.previous = slices.Clone(append(d.previous, mark.PreviousInstance))
	d.mu.Unlock()
	d.setInstance(mark.Instance)
	return &mark, nil
}
