package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/durable"
	"github.com/batchd/batchd/internal/payment"
	boltkv "github.com/batchd/batchd/internal/state/bolt"
	"github.com/batchd/batchd/internal/state/kv"
)

// Restoring a snapshot. A snapshot knows nothing of what happened after
// it was taken: a row it shows pending or in flight may have been sent
// since, and a row it shows in doubt may have been settled. So Restore
// puts every row that has no check on record, and every funding row
// without a result (no source on record), in doubt (payment.Suspect),
// with its attempt time no later than the snapshot's, and submit's
// resolver looks each one up (binding the check that exists, or
// releasing the row to be sent) before anything is sent: a restore never
// pays twice. Batches loaded after the snapshot are not in it; the
// checks made for them show up as unknown in the next reconcile's
// exceptions, which is why the restored mark stays until a reconcile
// whose window covers the snapshot's date completes (see ClearRestored).
//
// A restore also gives the ledger a new instance id, keeping the old one
// in its list of previous instances: batch labels
// (batchd-<instance>-<batch>) and ledger-assigned numbers restart from
// the snapshot's sequences, and a new batch must never carry the identity
// of a lost batch's row, whose check the resolver would otherwise take
// for its own.

// RestoreMark records that the ledger was restored from a snapshot.
type RestoreMark struct {
	SnapshotAt       time.Time `json:"snapshot_at"` // the ledger is as of then
	RestoredAt       time.Time `json:"restored_at"`
	From             string    `json:"from"`               // the snapshot file
	Replaced         string    `json:"replaced,omitempty"` // where the ledger it replaced was kept
	RowsInDoubt      int       `json:"rows_put_in_doubt"`
	Instance         string    `json:"instance"`
	PreviousInstance string    `json:"previous_instance"`
}

// String says it in one line, for status and logs.
func (m *RestoreMark) String() string {
	return fmt.Sprintf("restored at %s from a snapshot taken at %s (%s); %d rows without a check were put in doubt and are looked up before any send; files accepted after the snapshot are not in the ledger. This mark stays until a reconcile covering %s completes",
		m.RestoredAt.UTC().Format(time.RFC3339), m.SnapshotAt.UTC().Format(time.RFC3339), m.From, m.RowsInDoubt, m.SnapshotAt.UTC().Format(time.DateOnly))
}

// Restored returns the restored mark, or nil when the ledger was not
// restored (or a reconcile has cleared the mark since).
func (d *DB) Restored() (*RestoreMark, error) {
	var m *RestoreMark
	err := d.view(func(tx kv.Tx) error {
		raw := tx.Bucket(bucketMeta).Get(keyRestored)
		if raw == nil {
			return nil
		}
		m = &RestoreMark{}
		return json.Unmarshal(raw, m)
	})
	if err != nil {
		return nil, fmt.Errorf("read the restored mark: %w", err)
	}
	return m, nil
}

// ClearRestored removes the restored mark: a reconcile whose window
// covers the snapshot's date has completed.
func (d *DB) ClearRestored() error {
	err := d.update(func(tx kv.Tx) error { return tx.Bucket(bucketMeta).Delete(keyRestored) })
	if err != nil {
		return fmt.Errorf("clear the restored mark: %w", err)
	}
	return nil
}

// RestoreOptions tunes Restore.
type RestoreOptions struct {
	// Now is the clock (default time.Now).
	Now func() time.Time
	// OtherInstance allows restoring a snapshot of another ledger than
	// the one the state directory's marker names.
	OtherInstance bool
	// Settle is how long after the replaced ledger's last write the
	// restore waits before it installs a snapshot that has rows without a
	// check (submit.resolve_after): a create sent just before batchd
	// stopped may take that long to show in the service's list, and the
	// rows put in doubt are looked up at once. Wait is called with the time to wait until (holding the
	// ledger's lock, so that no batchd starts meanwhile); nil skips it.
	Settle time.Duration
	Wait   func(until time.Time) error
	// AccountKeys opens the snapshot's account numbers (Options.AccountKeys);
	// nil reads the ring in dir.
	AccountKeys *acctseal.Ring
}

// Restoral is what Restore did.
type Restoral struct {
	Ledger string
	Mark   RestoreMark
	Report *Report // the check of the installed ledger
}

// ErrInUse is returned by Restore while a process holds the ledger.
var ErrInUse = errors.New("the ledger is in use by a running batchd")

// Restore installs the snapshot from as the ledger of the state directory
// dir. batchd must be stopped: Restore refuses while the ledger is
// locked. It checks the snapshot, copies it beside the ledger, puts every
// row without a check (or funding row without a result) in doubt as of
// the snapshot's time, gives the
// ledger a new instance id, sets the restored mark, checks the result,
// and only then swaps it in: the ledger it replaces is kept as
// batchd.db.replaced-<time>, never deleted. A failure at any step leaves
// the ledger as it was.
func Restore(dir, from string, opts RestoreOptions) (*Restoral, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	now := opts.Now().UTC()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	ledger := filepath.Join(dir, FileName)
	from, err := filepath.Abs(from)
	if err != nil {
		return nil, err
	}
	if same(from, ledger) {
		return nil, fmt.Errorf("restore: %s is the ledger itself", from)
	}
	unlock, err := boltkv.Lock(ledger)
	if errors.Is(err, ErrLocked) {
		return nil, fmt.Errorf("restore: %s: %w: stop batchd (systemctl stop batchd, and any batchd command) first", ledger, ErrInUse)
	}
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	defer unlock()

	rep, err := CheckFile(from)
	if err != nil {
		return nil, fmt.Errorf("restore: check %s: %w", from, err)
	}
	if !rep.OK() {
		return nil, fmt.Errorf("restore: the snapshot fails its check, so it was not installed: %s", rep.Summary())
	}
	if rep.SnapshotAt.IsZero() {
		return nil, fmt.Errorf("restore: %s is not a snapshot made by `batchd backup` (it has no snapshot time); restore only such snapshots, whose time says which rows to look up", from)
	}
	mk, hasMarker, mkErr := boltkv.ReadMarker(dir)
	if mkErr != nil {
		hasMarker = false
	}
	if hasMarker && !opts.OtherInstance && mk.Instance != rep.id.instance &&
		!slices.Contains(mk.Previous, rep.id.instance) && !slices.Contains(rep.id.previous, mk.Instance) {
		return nil, fmt.Errorf("restore: %s is a snapshot of ledger instance %s, but this state directory's ledger is instance %s (marker %s): is it the right snapshot? --other-instance restores it anyway",
			from, rep.id.instance, mk.Instance, filepath.Join(dir, MarkerName))
	}

	open := rep.ByState[payment.Pending] + rep.ByState[payment.InFlight] + rep.ByState[payment.InDoubt] + rep.ByState[payment.Held]
	if fi, err := os.Stat(ledger); err == nil && open > 0 && opts.Wait != nil && opts.Settle > 0 {
		if until := fi.ModTime().Add(opts.Settle); until.After(opts.Now()) {
			if err := opts.Wait(until); err != nil {
				return nil, fmt.Errorf("restore: %w", err)
			}
		}
	}

	tmp := filepath.Join(dir, ".batchd.db.restoring-"+strconv.Itoa(os.Getpid()))
	if err := CopyFile(from, tmp); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("restore: copy %s: %w", from, err)
	}
	installed := false
	defer func() {
		if !installed {
			os.Remove(tmp)
		}
	}()
	o := Options{Now: opts.Now, AccountKeys: opts.AccountKeys}
	o.defaults()
	d, err := openFile(tmp, o, false, nil)
	if err != nil {
		return nil, fmt.Errorf("restore: open the copy: %w", err)
	}
	mark := RestoreMark{SnapshotAt: rep.SnapshotAt, RestoredAt: now, From: from, PreviousInstance: rep.id.instance}
	// No process holds the file: no create can still leave, and the
	// rows need no send-by deadline.
	n, err := d.suspectAll(d.update, rep.SnapshotAt, time.Time{}, "restored from a snapshot taken at "+rep.SnapshotAt.UTC().Format(time.RFC3339))
	if err == nil {
		mark.RowsInDoubt = n
		if _, statErr := os.Lstat(ledger); statErr == nil {
			mark.Replaced = ledger + ".replaced-" + now.Format("20060102T150405Z")
		}
		err = d.finishRestore(d.update, &mark, mk.Generation)
	}
	if cerr := d.store.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	after, err := CheckFile(tmp)
	if err != nil {
		return nil, fmt.Errorf("restore: check the restored ledger: %w", err)
	}
	if !after.OK() {
		return nil, fmt.Errorf("restore: the restored ledger fails its check, so it was not installed: %s", after.Summary())
	}
	if err := syncFile(tmp); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	// Run as root for a service with its own user (systemd's
	// DynamicUser=), the new ledger must still be the service's.
	if err := ownLikeDir(tmp, dir); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	// The ledger it replaces stays, under another name: linked first, so
	// that batchd.db names a whole ledger at every instant.
	if mark.Replaced != "" {
		if err := os.Link(ledger, mark.Replaced); err != nil {
			if err := os.Rename(ledger, mark.Replaced); err != nil {
				return nil, fmt.Errorf("restore: keep the replaced ledger: %w", err)
			}
		}
	}
	if err := os.Rename(tmp, ledger); err != nil {
		return nil, fmt.Errorf("restore: install %s: %w", ledger, err)
	}
	installed = true
	if err := durable.SyncDir(dir); err != nil {
		return nil, fmt.Errorf("restore: sync %s: %w", dir, err)
	}
	prev := append(slices.Clone(after.id.previous), mk.Previous...)
	if err := boltkv.WriteMarker(dir, marker{Instance: mark.Instance, Generation: after.id.generation, Previous: prev, Updated: now}); err != nil {
		return nil, fmt.Errorf("restore: the ledger is installed, but its marker could not be written: %w", err)
	}
	if err := ownLikeDir(filepath.Join(dir, MarkerName), dir); err != nil {
		return nil, fmt.Errorf("restore: the ledger is installed, but: %w", err)
	}
	after.Path = ledger
	return &Restoral{Ledger: ledger, Mark: mark, Report: after}, nil
}

// ownLikeDir gives path the owner of dir when they differ (only root
// can, and only root needs to).
func ownLikeDir(path, dir string) error {
	di, err1 := os.Stat(dir)
	fi, err2 := os.Stat(path)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	d, ok1 := di.Sys().(*syscall.Stat_t)
	f, ok2 := fi.Sys().(*syscall.Stat_t)
	if !ok1 || !ok2 || (d.Uid == f.Uid && d.Gid == f.Gid) || os.Geteuid() != 0 {
		return nil
	}
	if err := os.Chown(path, int(d.Uid), int(d.Gid)); err != nil {
		return fmt.Errorf("give %s the state directory's owner (uid %d): %w", path, d.Uid, err)
	}
	return nil
}

// CopyFile copies a ledger file (or a snapshot) to a new file to, 0600,
// fsynced; it refuses a to that exists. restore installs snapshots
// through it, and migrate-state reads a private copy of a ledger made by
// it, so the original is never opened for writing.
func CopyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if err == nil {
		err = dst.Sync()
	}
	return errors.Join(err, dst.Close())
}

// suspectAll puts every row without a check in doubt, and every funding
// row without a result, through write (the ledger's update, or the
// restore rules' own writes): the ledger is as of time at, and why says
// how it came to be. Each row's attempt time becomes at, or stays earlier
// when it was (a create sent before at must stay inside the lookup's
// window), and its send-by deadline becomes sendBy unless later: a
// create an intent the ledger lost allowed may leave until then, so no
// lookup may release the row before (zero: no process can still send).
func (d *DB) suspectAll(write func(func(kv.Tx) error) error, at, sendBy time.Time, why string) (int, error) {
	var keys, srcKeys []payment.RowKey
	err := d.view(func(tx kv.Tx) (err error) {
		if keys, err = paymentRows.openKeys(tx); err != nil {
			return err
		}
		srcKeys, err = sourceRows.openKeys(tx)
		return err
	})
	if err != nil {
		return 0, err
	}
	note := why + ": a create may have left after " + at.UTC().Format(time.RFC3339) + "; looked up before any send"
	if err := sourceRows.suspect(d, write, srcKeys, at, sendBy, note); err != nil {
		return 0, err
	}
	if err := paymentRows.suspect(d, write, keys, at, sendBy, note); err != nil {
		return 0, err
	}
	return len(keys) + len(srcKeys), nil
}

// finishRestore turns the snapshot into a ledger: a new instance (the old
// one kept in the previous list), a generation ahead of the marker's, no
// snapshot stamp, and the restored mark.
func (d *DB) finishRestore(write func(func(kv.Tx) error) error, m *RestoreMark, markerGen uint64) error {
	inst, err := newInstance()
	if err != nil {
		return err
	}
	m.Instance = inst
	return write(func(tx kv.Tx) error {
		meta := tx.Bucket(bucketMeta)
		var prev []string
		if raw := meta.Get(keyPrevious); raw != nil {
			if err := json.Unmarshal(raw, &prev); err != nil {
				return fmt.Errorf("previous instances: %w", err)
			}
		}
		prev = append(prev, m.PreviousInstance)
		rawPrev, _ := json.Marshal(prev)
		rawMark, err := json.Marshal(m)
		if err != nil {
			return err
		}
		gen := markerGen
		if raw := meta.Get(keyGeneration); len(raw) == 8 {
			gen = max(gen, binary.BigEndian.Uint64(raw))
		}
		for _, kv := range []struct{ k, v []byte }{
			{keyInstance, []byte(m.Instance)}, {keyPrevious, rawPrev}, {keyRestored, rawMark}, {keyGeneration, u64(gen + 1)},
		} {
			if err := meta.Put(kv.k, kv.v); err != nil {
				return err
			}
		}
		// A shared ledger now trusts the database it is on (rewind.go);
		// a file has no origin.
		if live, err := tx.Origin(); err != nil {
			return err
		} else if !live.IsZero() {
			if err := putOrigin(meta, live); err != nil {
				return err
			}
		}
		for _, k := range [][]byte{keySnapshotAt, keySnapshotOf, keyRewinding} {
			if err := meta.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}
