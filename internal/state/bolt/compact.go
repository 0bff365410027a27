package bolt

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/batchd/batchd/internal/durable"
)

// Compaction. bbolt never gives space back to the file system: pages
// freed by pruned batches are reused by later writes, so the file stops
// growing, but it does not shrink. Compact writes the live data into a
// new file and puts it in place of the old one. It needs the ledger to
// itself: batchd must be stopped.

// CompactSuffix names the file Compact writes beside the ledger before
// renaming it over the ledger. One left behind by an interrupted
// compaction is a partial copy; the next Compact removes it.
const CompactSuffix = ".compact"

// compactTxSize is how many bytes of keys and values Compact copies per
// transaction of the new file, which bounds its memory.
const compactTxSize = 64 << 20

// CompactResult says what Compact did.
type CompactResult struct {
	Path          string
	Before, After int64 // the file's size
}

// Compact rewrites the ledger file at path into a new file holding only its
// live pages, packed full, and renames that over the ledger:
//
//  1. lock the ledger (ErrLocked when another process has it open);
//  2. copy every bucket, key, value and sequence into path+CompactSuffix
//     (bbolt.Compact), then fsync it;
//  3. verify the copy: bbolt's own consistency check, and every bucket,
//     key, value and sequence equal to the ledger's;
//  4. give it the ledger's owner and mode, rename it over the ledger and
//     fsync the directory;
//  5. overwrite the meta pages of the old file, which is now unlinked, so
//     that a process that opened the old file just before the rename and
//     is waiting for its lock finds it invalid, instead of writing into a
//     file nobody will read again; then release the lock.
//
// A crash before the rename leaves the ledger as it was (and a partial
// copy, removed by the next Compact); after it, the compacted ledger. The
// ledger's generation (the marker beside it) is unchanged: the copy holds
// the same meta bucket.
func Compact(path string, timeout time.Duration) (res CompactResult, err error) {
	if timeout <= 0 {
		timeout = time.Second
	}
	dir := filepath.Dir(path)
	res.Path = path
	fail := func(err error) (CompactResult, error) {
		return res, fmt.Errorf("compact %s: %w", path, err)
	}
	before, err := os.Stat(path)
	if err != nil {
		return fail(err)
	}
	res.Before = before.Size()
	src, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return fail(fmt.Errorf("%w (waited %s); stop batchd first: compaction needs the ledger to itself", ErrLocked, timeout))
	}
	if err != nil {
		return fail(err)
	}
	defer src.Close()
	defer func() {
		// bbolt meets a damaged page with a panic.
		if r := recover(); r != nil {
			res, err = fail(fmt.Errorf("the ledger file is damaged (%v); it was left as it was", r))
		}
	}()
	tmp := path + CompactSuffix
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail(err)
	}
	if err := copyLedger(src, tmp); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	if err := matchOwner(tmp, before); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	// The old file, held open to spoil it once it has been replaced.
	old, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	defer old.Close()
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	if err := durable.SyncDir(dir); err != nil {
		return fail(fmt.Errorf("compacted, but %w", err))
	}
	if err := spoil(old, src.Info().PageSize); err != nil {
		return fail(fmt.Errorf("compacted, but the old file could not be marked invalid: %w", err))
	}
	if after, err := os.Stat(path); err == nil {
		res.After = after.Size()
	}
	return res, nil
}

// copyLedger writes src into a new file at path, fsyncs it and verifies
// it against src.
func copyLedger(src *bolt.DB, path string) error {
	dst, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, PageSize: src.Info().PageSize, NoSync: true})
	if err != nil {
		return err
	}
	if err := bolt.Compact(dst, src, compactTxSize); err != nil {
		dst.Close()
		return fmt.Errorf("copy: %w", err)
	}
	// Committed without fsync (NoSync) for speed: one fsync now, before
	// the copy can replace anything.
	dst.NoSync = false
	if err := dst.Sync(); err != nil {
		dst.Close()
		return fmt.Errorf("sync the copy: %w", err)
	}
	if err := dst.Close(); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return fmt.Errorf("sync the copy: %w", err)
	}
	check, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("reopen the copy: %w", err)
	}
	defer check.Close()
	return verifyCopy(src, check)
}

// verifyCopy checks that cp passes bbolt's consistency check and holds
// exactly the buckets, keys, values and sequences of src.
func verifyCopy(src, cp *bolt.DB) error {
	return src.View(func(stx *bolt.Tx) error {
		return cp.View(func(ctx *bolt.Tx) error {
			for err := range ctx.Check() {
				return fmt.Errorf("verify the copy: %w", err)
			}
			if err := sameBuckets(stx.Cursor(), ctx.Cursor(), nil,
				func(name []byte) (*bolt.Bucket, *bolt.Bucket) { return stx.Bucket(name), ctx.Bucket(name) }); err != nil {
				return fmt.Errorf("verify the copy: %w", err)
			}
			return nil
		})
	})
}

// sameBuckets walks two cursors in step, descending into nested buckets.
func sameBuckets(a, b *bolt.Cursor, path []string, sub func(name []byte) (*bolt.Bucket, *bolt.Bucket)) error {
	ka, va := a.First()
	kb, vb := b.First()
	for ; ka != nil || kb != nil; ka, va, kb, vb = next2(a, b) {
		if !bytes.Equal(ka, kb) || !bytes.Equal(va, vb) || (va == nil) != (vb == nil) {
			return fmt.Errorf("bucket %q differs at key %q", path, ka)
		}
		if va != nil {
			continue
		}
		ba, bb := sub(ka)
		if ba == nil || bb == nil {
			return fmt.Errorf("bucket %q: %q is not a bucket in both", path, ka)
		}
		if ba.Sequence() != bb.Sequence() {
			return fmt.Errorf("bucket %q: sequence %d, copy %d", append(path, string(ka)), ba.Sequence(), bb.Sequence())
		}
		if err := sameBuckets(ba.Cursor(), bb.Cursor(), append(path, string(ka)),
			func(name []byte) (*bolt.Bucket, *bolt.Bucket) { return ba.Bucket(name), bb.Bucket(name) }); err != nil {
			return err
		}
	}
	return nil
}

func next2(a, b *bolt.Cursor) ([]byte, []byte, []byte, []byte) {
	ka, va := a.Next()
	kb, vb := b.Next()
	return ka, va, kb, vb
}

// matchOwner gives path the mode and, when it differs, the owner of the
// ledger it replaces: batchd runs as its own user (systemd's DynamicUser),
// and an administrator who compacts as root must not leave it a ledger it
// cannot open.
func matchOwner(path string, like os.FileInfo) error {
	if err := os.Chmod(path, 0o600); err != nil {
		return err
	}
	st, ok := like.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	cur, err := os.Stat(path)
	if err != nil {
		return err
	}
	if c, ok := cur.Sys().(*syscall.Stat_t); ok && c.Uid == st.Uid && c.Gid == st.Gid {
		return nil
	}
	if err := os.Chown(path, int(st.Uid), int(st.Gid)); err != nil {
		return fmt.Errorf("give the copy the ledger's owner (uid %d, gid %d): %w", st.Uid, st.Gid, err)
	}
	return nil
}

// spoil overwrites the two meta pages of a replaced ledger with zeros and
// syncs it, so that bbolt refuses to open it ("invalid database").
func spoil(f *os.File, pageSize int) error {
	if _, err := f.WriteAt(make([]byte, 2*pageSize), 0); err != nil {
		return err
	}
	return f.Sync()
}
