package remote

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"time"
)

// Rename renames the file from to the path to, in one SFTP rename, never
// replacing anything: it is the primitive of claims, where two batchd
// processes may rename the same file at the same instant and exactly one
// of them must win.
//
//   - If from does not exist (another client renamed it first), the error
//     matches fs.ErrNotExist.
//   - If to exists, the error matches fs.ErrExist and nothing is renamed.
//   - Any other refusal (no permission, to's folder missing) matches
//     neither.
//
// Rename uses the plain SSH_FXP_RENAME, never posix-rename@openssh.com
// (which replaces). OpenSSH implements it as link then unlink, so the
// target is never replaced, and of two clients renaming the same source
// only one's unlink succeeds: the loser's server removes its new link and
// reports failure. A server whose rename replaces the target (pkg/sftp's,
// the demo server) is protected by the check before the rename, which is
// enough where, as for claims, only this process renames into to's folder.
// On every server the source is taken by one rename only.
//
// If the connection is lost during the rename, Rename reconnects and finds
// out whether it took effect (from is gone and to has from's size and
// modification time) before trying again.
func (c *Client) Rename(ctx context.Context, from, to string) error {
	r := &renamer{from: from, to: to}
	err := c.do(ctx, true, r.rename)
	if err != nil {
		return fmt.Errorf("sftp rename %s to %s: %w", from, to, err)
	}
	return nil
}

type renamer struct {
	from, to string
	src      os.FileInfo // from, as stat'ed before the rename
	sent     bool        // the rename request was sent (its answer may be lost)
}

func (r *renamer) rename(k *call) error {
	if k.retried && r.sent {
		done, err := r.happened(k.cn)
		if done || err != nil {
			return err
		}
	}
	src, err := k.cn.sftp.Lstat(r.from)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: %w", r.from, fs.ErrNotExist)
	}
	if err != nil {
		return err
	}
	r.src = src
	if taken, err := exists(k.cn, r.to); err != nil {
		return err
	} else if taken {
		return fmt.Errorf("%s: %w", r.to, fs.ErrExist)
	}
	r.sent = true
	err = k.cn.sftp.Rename(r.from, r.to)
	if err == nil {
		return nil
	}
	if !k.cn.alive() || transportError(err) {
		return err
	}
	// Refused. Say why, in the terms the caller acts on.
	if _, serr := k.cn.sftp.Lstat(r.from); errors.Is(serr, os.ErrNotExist) {
		return fmt.Errorf("%s: %w (renamed by another client)", r.from, fs.ErrNotExist)
	}
	if taken, xerr := exists(k.cn, r.to); xerr == nil && taken {
		return fmt.Errorf("%s: %w", r.to, fs.ErrExist)
	}
	if errors.Is(err, os.ErrNotExist) {
		// from is there, so it is to's folder that is missing: not the
		// "someone else took it" the caller reads fs.ErrNotExist as.
		return fmt.Errorf("the folder %s does not exist", path.Dir(r.to))
	}
	return fmt.Errorf("refused: %w", err)
}

// happened reports whether the rename whose answer was lost took effect.
// If from is gone and to is not it, another client took from first.
func (r *renamer) happened(cn *conn) (bool, error) {
	return landed(cn.sftp.Lstat, r.from, r.to, r.src,
		fmt.Errorf("%s: %w (gone while the connection was lost, and %s is not it)", r.from, fs.ErrNotExist, r.to))
}

// Touch sets the modification (and access) time of p to t, in whole
// seconds, as SFTP version 3 has them. A missing file gives an error
// matching fs.ErrNotExist.
func (c *Client) Touch(ctx context.Context, p string, t time.Time) error {
	err := c.do(ctx, true, func(k *call) error { return k.cn.sftp.Chtimes(p, t, t) })
	if err != nil {
		return fmt.Errorf("sftp touch %s: %w", p, err)
	}
	return nil
}
