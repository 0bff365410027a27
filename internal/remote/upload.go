package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/pkg/sftp"
)

// Upload writes the contents of r to dir/name atomically, replacing a file of
// that name: readers of dir see the old file or the complete new one, never
// a part.
//
// The data goes to a hidden temporary file, dir/.name.<random>.tmp, which is
// flushed to disk (fsync@openssh.com, when the server offers it), closed,
// and renamed over dir/name (posix-rename@openssh.com; without it, the old
// file is removed first, so for a moment there is no file, still never half
// of one). On failure the temporary file is removed. dir is created if it
// does not exist.
//
// Upload is retried after a lost connection only when r is an io.Seeker, by
// seeking back to where r was; other readers cannot be replayed. r is read
// from another goroutine, and Upload returns only after r returns.
func (c *Client) Upload(ctx context.Context, dir, name string, r io.Reader) error {
	target := path.Join(dir, name)
	if err := checkName(name); err != nil {
		return fmt.Errorf("sftp upload %s: %w", target, err)
	}
	rewind, retry := rewinder(r)
	err := c.do(ctx, retry, func(k *call) error {
		if k.retried {
			if err := rewind(); err != nil {
				return asLocal(fmt.Errorf("rewind the input: %w", err))
			}
		}
		return c.upload(k, dir, name, r)
	})
	if err != nil {
		return fmt.Errorf("sftp upload %s: %w", target, err)
	}
	return nil
}

func (c *Client) upload(k *call, dir, name string, r io.Reader) error {
	tmp := path.Join(dir, "."+name+"."+randomHex()+".tmp")
	f, err := createExcl(k, dir, tmp)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			c.removeTemp(k.cn, tmp)
		}
	}()
	if _, err := f.ReadFromWithConcurrency(&pausingReader{r: r, wd: k.wd}, 0); err != nil {
		return err
	}
	if k.cn.fsync {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("fsync %s: %w", tmp, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := replace(k.cn, tmp, path.Join(dir, name)); err != nil {
		return err
	}
	done = true
	return nil
}

// createExcl creates a new file, creating dir first if it is missing.
func createExcl(k *call, dir, p string) (*sftp.File, error) {
	const flags = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	f, err := k.cn.sftp.OpenFile(p, flags)
	if errors.Is(err, os.ErrNotExist) {
		if err := k.cn.sftp.MkdirAll(dir); err != nil {
			return nil, fmt.Errorf("mkdir %s: %w", dir, err)
		}
		f, err = k.cn.sftp.OpenFile(p, flags)
	}
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", p, err)
	}
	return f, nil
}

// replace renames tmp to target, replacing target if it exists.
func replace(cn *conn, tmp, target string) error {
	if cn.posixRename {
		if err := cn.sftp.PosixRename(tmp, target); err != nil {
			return fmt.Errorf("rename %s: %w", tmp, err)
		}
		return nil
	}
	err := cn.sftp.Rename(tmp, target)
	if err == nil {
		return nil
	}
	if !cn.alive() || transportError(err) {
		return err
	}
	// A plain SFTP rename refuses to replace an existing file.
	if rerr := cn.sftp.Remove(target); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		return fmt.Errorf("remove old %s: %w", target, rerr)
	}
	if err := cn.sftp.Rename(tmp, target); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	return nil
}

// removeTemp deletes a failed upload's temporary file: on the same
// connection if it still works, otherwise on a new one, within DialTimeout.
// A file it cannot remove is logged; its leading dot keeps batchd's pickup
// and most people from taking it for a real file.
func (c *Client) removeTemp(cn *conn, tmp string) {
	if cn.alive() {
		err := cn.sftp.Remove(tmp)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.DialTimeout)
	defer cancel()
	err := c.do(ctx, false, func(k *call) error { return k.cn.sftp.Remove(tmp) })
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		c.log.Warn("sftp could not remove a temporary upload file; it is safe to delete", "path", tmp, "error", err)
	}
}

// rewinder returns a function that moves r back to its current position,
// if r can seek.
func rewinder(r io.Reader) (func() error, bool) {
	s, ok := r.(io.Seeker)
	if !ok {
		return nil, false
	}
	pos, err := s.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, false
	}
	return func() error {
		_, err := s.Seek(pos, io.SeekStart)
		return err
	}, true
}

func randomHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}

// pausingReader pauses the watchdog while the caller's reader produces data,
// so that a slow producer is not taken for a dead server, and marks the
// reader's errors as local.
type pausingReader struct {
	r  io.Reader
	wd *watchdog
}

func (p *pausingReader) Read(b []byte) (int, error) {
	p.wd.pause()
	defer p.wd.resume()
	n, err := p.r.Read(b)
	if err != nil && err != io.EOF {
		err = asLocal(err)
	}
	return n, err
}
