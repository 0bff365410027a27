package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/batchd/batchd/internal/durable"
)

// atomicFile is a report being written under a temporary name beside its
// final path: ".<name>.<random>.tmp", mode 0640. commit syncs it, renames
// it over the path and syncs the directory; discard removes it. A reader
// of the path sees the old file or the new one, never half of one.
type atomicFile struct {
	f              *os.File
	path, tmp, dir string
	done           bool
	written        int64 // bytes written through Write
	synced         int64 // bytes handed to writeback (startWriteback)
}

// writebackEvery is how many bytes of a report are written between two
// requests to start writing them to disk. The kernel would otherwise keep
// them in memory for up to 30 s, and the fsync at commit would write the
// whole report (20 ms for the 18 MB status report of 100,000 lines) after
// reconcile's last request.
const writebackEvery = 4 << 20

// Write writes to the temporary file, and every writebackEvery bytes asks
// the kernel to start writing what came before (startWriteback: it does
// not wait, and commit's fsync remains what makes the file durable).
func (a *atomicFile) Write(p []byte) (int, error) {
	n, err := a.f.Write(p)
	a.written += int64(n)
	if a.written-a.synced >= writebackEvery {
		startWriteback(a.f, a.synced, a.written-a.synced)
		a.synced = a.written
	}
	return n, err
}

func createAtomic(path string) (*atomicFile, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o640); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &atomicFile{f: f, path: path, tmp: f.Name(), dir: dir}, nil
}

// sync flushes the temporary file to disk and closes it; rename then
// puts it in place. commit does both.
func (a *atomicFile) sync() error {
	if err := a.f.Sync(); err != nil {
		a.f.Close()
		return fmt.Errorf("sync: %w", err)
	}
	return a.f.Close()
}

func (a *atomicFile) rename() error {
	if err := os.Rename(a.tmp, a.path); err != nil {
		return err
	}
	a.done = true
	return durable.SyncDir(a.dir)
}

func (a *atomicFile) commit() error {
	if err := a.sync(); err != nil {
		return err
	}
	return a.rename()
}

// discard removes the temporary file unless it was committed.
func (a *atomicFile) discard() {
	if a == nil || a.done {
		return
	}
	a.f.Close() // may already be closed
	os.Remove(a.tmp)
	a.done = true
}

// Move puts the finished report at src in place at dst, replacing any
// report there: by a rename when both are on one file system, otherwise
// by an atomic copy (temporary file, sync, rename) and the removal of src.
// Either way a reader of dst never sees half a report.
func Move(src, dst string) error {
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("move report to %s: %w", dst, err)
	}
	if err := os.Rename(src, dst); err == nil {
		return durable.SyncDir(dir)
	} else if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("move report to %s: %w", dst, err)
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("move report to %s: %w", dst, err)
	}
	defer in.Close()
	a, err := createAtomic(dst)
	if err != nil {
		return fmt.Errorf("move report to %s: %w", dst, err)
	}
	defer a.discard()
	if _, err := io.Copy(a, in); err != nil {
		return fmt.Errorf("move report to %s: %w", dst, err)
	}
	if err := a.commit(); err != nil {
		return fmt.Errorf("move report to %s: %w", dst, err)
	}
	in.Close()
	return os.Remove(src)
}
