package state

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/durable"
	boltkv "github.com/batchd/batchd/internal/state/bolt"
	"github.com/batchd/batchd/internal/state/kv"
)

// Backups. A snapshot is a consistent copy of a ledger file as of one
// read transaction, served by the process that holds the ledger or read
// from the file (internal/state/bolt's snapshot.go says how). A backup is
// a snapshot written under a temporary name, stamped with its time
// (keySnapshotAt, in its own meta bucket), checked (CheckFile: the file's
// consistency and batchd's invariants), fsynced, renamed into place, and
// its directory fsynced. It is never opened as the live ledger: Restore
// installs it.

// SocketName is the snapshot socket in the state directory.
const SocketName = boltkv.SocketName

// SnapshotInfo describes one snapshot.
type SnapshotInfo = boltkv.SnapshotInfo

// Backup is a snapshot written and checked.
type Backup struct {
	Path   string
	Ledger string // the ledger it is a snapshot of
	SnapshotInfo
	Report *Report // the check of the written file
}

// adviceDamaged is what to do about a damaged ledger.
const adviceDamaged = "run `batchd check` for a diagnosis and `batchd restore --from SNAPSHOT` to install the last good snapshot"

// Backup writes a checked snapshot of the open ledger to path.
// A ledger not in a file answers ErrNoFileSnapshot.
func (d *DB) Backup(path string) (*Backup, error) {
	if d.file == nil {
		return nil, ErrNoFileSnapshot
	}
	return writeBackup(path, d.path, func(f *os.File) (SnapshotInfo, error) {
		var info SnapshotInfo
		err := d.file.Snapshot(d.now, func(i SnapshotInfo) (io.Writer, error) { info = i; return f, nil })
		if err != nil {
			return info, fmt.Errorf("snapshot of %s: %w", d.path, err)
		}
		return info, nil
	})
}

// BackupLedger writes a checked snapshot of the ledger in the state
// directory dir to path, through the process that holds the ledger (its
// socket), or from the file itself when no process holds it.
func BackupLedger(dir, path string) (*Backup, error) {
	ledger := filepath.Join(dir, FileName)
	return writeBackup(path, ledger, func(f *os.File) (SnapshotInfo, error) {
		return snapshotOf(dir, f)
	})
}

// snapshotOf copies the ledger in dir into f (see boltkv.SnapshotOf).
func snapshotOf(dir string, f *os.File) (SnapshotInfo, error) {
	return boltkv.SnapshotOf(filepath.Join(dir, FileName), filepath.Join(dir, SocketName), f)
}

// writeBackup writes the snapshot that copy produces under a temporary
// name beside path, stamps it with its time, checks it, fsyncs it,
// renames it to path and fsyncs the directory. A snapshot that fails its
// check is removed and is an error listing the faults.
func writeBackup(path, ledger string, copy func(*os.File) (SnapshotInfo, error)) (*Backup, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if same(path, ledger) {
		return nil, fmt.Errorf("%s is the ledger itself; write the snapshot elsewhere", path)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*") // 0600
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	info, err := copy(f)
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := boltkv.Verify(tmp); err != nil {
		return nil, fmt.Errorf("the snapshot of %s fails its check, so it was not kept: it %v; the ledger itself is damaged: %s", ledger, err, adviceDamaged)
	}
	if err := stampSnapshot(tmp, info, ledger); err != nil {
		return nil, fmt.Errorf("stamp %s: %w", tmp, err)
	}
	rep, err := CheckFile(tmp)
	if err != nil {
		return nil, fmt.Errorf("check the snapshot: %w", err)
	}
	rep.Path = path
	if !rep.OK() {
		return nil, fmt.Errorf("the snapshot of %s fails its check, so it was not kept; the ledger itself is damaged: %s: %s", ledger, adviceDamaged, rep.Summary())
	}
	if err := syncFile(tmp); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	done = true
	if err := durable.SyncDir(dir); err != nil {
		return nil, fmt.Errorf("sync %s: %w", dir, err)
	}
	return &Backup{Path: path, Ledger: ledger, SnapshotInfo: info, Report: rep}, nil
}

// stampSnapshot records in the snapshot's own meta bucket when it was
// taken and of which ledger.
func stampSnapshot(path string, info SnapshotInfo, ledger string) error {
	at, _ := info.At.UTC().MarshalText()
	return boltkv.UpdateFile(path, func(tx kv.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return errors.New("not a batchd ledger: it has no meta bucket")
		}
		if err := meta.Put(keySnapshotAt, at); err != nil {
			return err
		}
		return meta.Put(keySnapshotOf, []byte(ledger))
	})
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}

// same reports whether a and b name the same file (or the same path).
func same(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// BackupName is the file name of a snapshot taken at t:
// batchd-20260102T053000Z.db. Names sort in time order.
func BackupName(t time.Time) string {
	return "batchd-" + t.UTC().Format("20060102T150405Z") + ".db"
}

// IsBackupName reports whether name is one BackupName makes.
func IsBackupName(name string) bool {
	s, ok := strings.CutPrefix(name, "batchd-")
	if !ok {
		return false
	}
	s, ok = strings.CutSuffix(s, ".db")
	if !ok {
		return false
	}
	_, err := time.Parse("20060102T150405Z", s)
	return err == nil
}
