package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/batchd/batchd/internal/durable"
)

// Download copies remotePath into localDir and returns the local path, the
// SHA-256 of the content (lower-case hex) and its size.
//
// The file is streamed, never held in memory whole, into a hidden temporary
// file in localDir, fsynced, and renamed to "<sha256><ext>", where ext is the
// remote name's extension (".csv") when it is a plain one. Naming the copy by
// its content makes downloads idempotent (the same content lands on the same
// name) and keeps remote names, which the caller records, out of local paths.
// The directory is fsynced too, so a returned path survives a crash.
//
// If the remote file's size or modification time changes while it is read,
// Download fails with ErrChanged and leaves nothing behind. A path that is
// not a regular file (a symbolic link, a folder, a device...), looked at
// without following links before it is opened and again after it was
// read, fails with ErrNotRegular and leaves nothing behind: so a link, or
// a file swapped for one meanwhile, is never read through. A download cut
// short by a lost connection starts again from the beginning, once.
func (c *Client) Download(ctx context.Context, remotePath, localDir string) (local, sha256hex string, size int64, err error) {
	err = c.do(ctx, true, func(k *call) error {
		var err error
		local, sha256hex, size, err = download(k, remotePath, localDir)
		return err
	})
	if err != nil {
		return "", "", 0, fmt.Errorf("sftp download %s: %w", remotePath, err)
	}
	return local, sha256hex, size, nil
}

func download(k *call, remotePath, localDir string) (string, string, int64, error) {
	tmp, err := os.CreateTemp(localDir, ".download-*.tmp")
	if err != nil {
		return "", "", 0, asLocal(err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := fetch(k, remotePath, tmp, h)
	if err != nil {
		return "", "", 0, err
	}
	if err := tmp.Sync(); err != nil {
		return "", "", 0, asLocal(err)
	}
	if err := tmp.Close(); err != nil {
		return "", "", 0, asLocal(err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	final := filepath.Join(localDir, sum+plainExt(remotePath))
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", "", 0, asLocal(err)
	}
	done = true
	if err := durable.SyncDir(localDir); err != nil {
		return "", "", 0, asLocal(err)
	}
	return final, sum, n, nil
}

// fetch streams remotePath into w and h, and checks that the file did not
// change meanwhile.
func fetch(k *call, remotePath string, w io.Writer, h hash.Hash) (int64, error) {
	if err := regular(k, remotePath); err != nil {
		return 0, err
	}
	f, err := k.cn.sftp.Open(remotePath)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !before.Mode().IsRegular() {
		return 0, fmt.Errorf("%w: it is a %s", ErrNotRegular, kindOf(before.Mode()))
	}
	n, err := f.WriteTo(&pausingWriter{w: io.MultiWriter(w, h), wd: k.wd})
	if err != nil {
		return n, err
	}
	// Lstat, not Stat: a file swapped for a link while it was opened shows
	// here, and what was read is thrown away.
	after, err := k.cn.sftp.Lstat(remotePath)
	if err != nil {
		return n, err
	}
	if !after.Mode().IsRegular() {
		return n, fmt.Errorf("%w: it is a %s now", ErrNotRegular, kindOf(after.Mode()))
	}
	if n != before.Size() || after.Size() != n || !after.ModTime().Equal(before.ModTime()) {
		return n, fmt.Errorf("%w: read %d bytes; size %d, modified %s when opened; size %d, modified %s after",
			ErrChanged, n, before.Size(), before.ModTime().UTC().Format("15:04:05"),
			after.Size(), after.ModTime().UTC().Format("15:04:05"))
	}
	return n, nil
}

// regular checks, without following links, that p is a regular file.
func regular(k *call, p string) error {
	st, err := k.cn.sftp.Lstat(p)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: it is a %s", ErrNotRegular, kindOf(st.Mode()))
	}
	return nil
}

// plainExt is the extension of name if it is short and alphanumeric, else "".
func plainExt(name string) string {
	ext := path.Ext(name)
	if len(ext) < 2 || len(ext) > 10 {
		return ""
	}
	for _, r := range ext[1:] {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return ""
		}
	}
	return ext
}

// pausingWriter pauses the watchdog while the local side writes, so that a
// slow disk is not taken for a dead server.
type pausingWriter struct {
	w  io.Writer
	wd *watchdog
}

func (p *pausingWriter) Write(b []byte) (int, error) {
	n, err := p.wd.paused(func() (int, error) { return p.w.Write(b) })
	return n, asLocal(err)
}
