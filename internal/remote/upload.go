package remote

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/pkg/sftp"
)

// Modes of Upload (Options.TempUpload, the setting sftp.temp_upload).
const (
	// TempDot writes dir/.name.<random>.tmp, hidden by its leading dot,
	// then renames it to name. The default.
	TempDot = "dot"
	// TempSuffix writes dir/name.<random>.partial, then renames it to
	// name: for servers that refuse names starting with a dot.
	TempSuffix = "suffix"
	// TempNone writes dir/name itself, then dir/name.done once the file is
	// whole: for servers that refuse renames.
	TempNone = "none"
)

// DoneSuffix ends the marker that follows a TempNone upload.
const DoneSuffix = ".done"

// Upload writes the contents of r to dir/name, replacing a file of that
// name, so that nobody reading dir takes part of the file for the whole.
// How depends on Options.TempUpload:
//
//   - TempDot and TempSuffix: the data goes to a temporary file
//     (dir/.name.<random>.tmp, or dir/name.<random>.partial), which is
//     flushed to disk (fsync@openssh.com, when the server offers it),
//     closed, and renamed over dir/name (posix-rename@openssh.com; without
//     it, the old file is removed first, so for a moment there is no file,
//     still never half of one). Readers see the old file or the whole new
//     one.
//   - TempNone: an old dir/name.done is removed first (it would call the
//     new file whole while it is written), the data is written to dir/name
//     itself, flushed and closed, and only then is dir/name.done written,
//     holding the file's SHA-256 and name as sha256sum prints them. Readers
//     must wait for the marker.
//
// After a failure the temporary file (with TempNone, the partial file) is
// removed, as far as the server allows: one that refuses deletes keeps it,
// and Sweep removes it at a later run. dir is created if it does not exist.
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
		if c.opts.TempUpload == TempNone {
			return c.uploadDirect(k, dir, name, r)
		}
		return c.upload(k, dir, name, r)
	})
	if err != nil {
		return fmt.Errorf("sftp upload %s: %w", target, err)
	}
	return nil
}

// tempName is the temporary name of an upload of name in mode.
func tempName(mode, name string) string {
	if mode == TempSuffix {
		return name + "." + randomHex() + ".partial"
	}
	return "." + name + "." + randomHex() + ".tmp"
}

// IsTempName reports whether name is a temporary name Upload makes, in
// either mode that renames: ".<name>.<16 hex>.tmp" or
// "<name>.<16 hex>.partial". Sweep removes nothing else.
func IsTempName(name string) bool {
	var rest string
	switch {
	case strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp"):
		rest = strings.TrimSuffix(name[1:], ".tmp")
	case strings.HasSuffix(name, ".partial"):
		rest = strings.TrimSuffix(name, ".partial")
	default:
		return false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 1 || len(rest)-i-1 != 2*randomBytes {
		return false
	}
	for _, r := range rest[i+1:] {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

func (c *Client) upload(k *call, dir, name string, r io.Reader) error {
	mode := c.opts.TempUpload
	tmp := path.Join(dir, tempName(mode, name))
	f, err := openFile(k, dir, tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		if mode == TempDot && errors.Is(err, os.ErrPermission) {
			err = fmt.Errorf("%w (a server that refuses names starting with a dot needs sftp.temp_upload: %s)", err, TempSuffix)
		}
		return err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			c.removeLeftover(k.cn, tmp, "a temporary upload file; it is safe to delete")
		}
	}()
	if _, err := f.ReadFromWithConcurrency(&pausingReader{r: r, wd: k.wd}, 0); err != nil {
		return err
	}
	if err := flush(k, f, tmp); err != nil {
		return err
	}
	if err := replace(k.cn, tmp, path.Join(dir, name)); err != nil {
		return err
	}
	done = true
	return nil
}

// uploadDirect writes dir/name in place, then its ".done" marker.
func (c *Client) uploadDirect(k *call, dir, name string, r io.Reader) error {
	target := path.Join(dir, name)
	marker := target + DoneSuffix
	// Looked up first: a server that refuses deletes may refuse to delete
	// even a file that is not there.
	if old, err := exists(k.cn, marker); err != nil {
		return err
	} else if old {
		if err := k.cn.sftp.Remove(marker); err != nil && !errors.Is(err, os.ErrNotExist) {
			if !k.cn.alive() || transportError(err) {
				return err
			}
			return fmt.Errorf("remove the old marker %s, which would call the new file whole while it is written: %w", marker, err)
		}
	}
	f, err := openFile(k, dir, target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			c.removeLeftover(k.cn, target, "a partial upload, with no "+DoneSuffix+" marker; the next upload of it replaces it")
		}
	}()
	h := sha256.New()
	if _, err := f.ReadFromWithConcurrency(&pausingReader{r: io.TeeReader(r, h), wd: k.wd}, 0); err != nil {
		return err
	}
	if err := flush(k, f, target); err != nil {
		return err
	}
	m, err := openFile(k, dir, marker, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(m, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), name)
	if err != nil {
		m.Close()
		err = fmt.Errorf("write %s: %w", marker, err)
	} else {
		err = flush(k, m, marker)
	}
	if err != nil {
		c.removeLeftover(k.cn, marker, "the marker of a failed upload")
		return err
	}
	done = true
	return nil
}

// openFile opens p with flags, creating dir first if it is missing.
func openFile(k *call, dir, p string, flags int) (*sftp.File, error) {
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

// flush syncs f to the server's disk, when the server can, and closes it.
func flush(k *call, f *sftp.File, p string) error {
	if k.cn.fsync {
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("fsync %s: %w", p, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", p, err)
	}
	return nil
}

// replace renames tmp to target, replacing target if it exists.
func replace(cn *conn, tmp, target string) error {
	if cn.posixRename {
		if err := cn.sftp.PosixRename(tmp, target); err != nil {
			return renameError(tmp, err)
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
	// A plain SFTP rename refuses to replace an existing file; if there
	// is none, the server refused the rename itself.
	if taken, xerr := exists(cn, target); xerr != nil {
		return xerr
	} else if !taken {
		return renameError(tmp, err)
	}
	if rerr := cn.sftp.Remove(target); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		return fmt.Errorf("remove old %s: %w", target, rerr)
	}
	if err := cn.sftp.Rename(tmp, target); err != nil {
		return renameError(tmp, err)
	}
	return nil
}

// renameError describes a failed rename of tmp, with a hint when the
// server refused it.
func renameError(tmp string, err error) error {
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("rename %s: %w (a server that refuses renames needs sftp.temp_upload: %s)", tmp, err, TempNone)
	}
	return fmt.Errorf("rename %s: %w", tmp, err)
}

// removeLeftover deletes what a failed upload left (what says what it is):
// on the same connection if it still works, otherwise on a new one, within
// DialTimeout. A file it cannot remove (a server may refuse deletes) is
// logged; a temporary name is removed by a later Sweep.
func (c *Client) removeLeftover(cn *conn, p, what string) {
	if cn.alive() {
		err := cn.sftp.Remove(p)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		if cn.alive() && !transportError(err) {
			c.log.Warn("sftp could not remove what a failed upload left", "path", p, "what", what, "error", err)
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.DialTimeout)
	defer cancel()
	err := c.do(ctx, false, func(k *call) error { return k.cn.sftp.Remove(p) })
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		c.log.Warn("sftp could not remove what a failed upload left", "path", p, "what", what, "error", err)
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

// randomBytes is the length of the random part of temporary names.
const randomBytes = 8

func randomHex() string {
	b := make([]byte, randomBytes)
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
	n, err := p.wd.paused(func() (int, error) { return p.r.Read(b) })
	if err != nil && err != io.EOF {
		err = asLocal(err)
	}
	return n, err
}

// Sweep removes from dir the temporary files of uploads that never
// finished (the names IsTempName recognises, regular files only, nothing
// else), last modified before before: those of a failed upload whose
// delete the server refused, or of a process killed mid-upload. An upload
// under way (of this process or of another batchd) keeps its temporary
// file's time recent, so callers pass a time well in the past, on a clock
// kept in step with the server's.
//
// It returns the paths it removed. Files the server refuses to delete are
// left, and named in the error; a missing dir is not an error.
func (c *Client) Sweep(ctx context.Context, dir string, before time.Time) ([]string, error) {
	list, err := c.List(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, f := range list {
		if f.IsDir || !f.Mode.IsRegular() || !IsTempName(f.Name) || !f.ModTime.Before(before) {
			continue
		}
		p := path.Join(dir, f.Name)
		err := c.do(ctx, true, func(k *call) error { return k.cn.sftp.Remove(p) })
		switch {
		case err == nil:
			removed = append(removed, p)
		case errors.Is(err, os.ErrNotExist):
			// gone meanwhile
		case errors.Is(err, ErrConnectionLost), errors.Is(err, ErrClosed), ctx.Err() != nil:
			return removed, fmt.Errorf("sftp sweep %s: %w", dir, err)
		default:
			errs = append(errs, fmt.Errorf("sftp remove %s: %w", p, err))
		}
	}
	return removed, errors.Join(errs...)
}
