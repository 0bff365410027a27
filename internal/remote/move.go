package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
)

// MaxSuffix bounds the numbered names Move tries.
const MaxSuffix = 9999

// Move renames from into toDir (created if missing) as name, never replacing
// an existing file: if toDir/name is taken it tries name-1.csv, name-2.csv
// and so on (the number goes before the extension). It returns the path the
// file now has. batchd never deletes or overwrites a finance team's file.
//
// Move uses the plain SFTP rename, which OpenSSH refuses when the target
// exists (it links, then unlinks), so a file that appears between the check
// and the rename is not clobbered either; the next number is tried instead.
// Servers whose rename replaces (such as pkg/sftp's, used by batchd's demo
// server) are protected only by the check.
//
// If the connection is lost during the rename, Move reconnects and first
// checks whether the rename took effect (from is gone and the target has
// from's size and modification time) before trying again.
func (c *Client) Move(ctx context.Context, from, toDir, name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", fmt.Errorf("sftp move %s: %w", from, err)
	}
	m := &mover{from: from, toDir: toDir, name: name}
	var final string
	err := c.do(ctx, true, func(k *call) error {
		var err error
		final, err = m.move(k)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("sftp move %s: %w", from, err)
	}
	return final, nil
}

// mover carries a Move's state across a reconnect.
type mover struct {
	from, toDir, name string
	src               os.FileInfo // from, as stat'ed before the rename
	pending           string      // the target of a rename that may have happened
}

func (m *mover) move(k *call) (string, error) {
	if k.retried && m.pending != "" {
		done, err := m.happened(k.cn)
		if err != nil {
			return "", err
		}
		if done {
			return m.pending, nil
		}
	}
	if err := k.cn.sftp.MkdirAll(m.toDir); err != nil {
		return "", fmt.Errorf("mkdir %s: %w", m.toDir, err)
	}
	src, err := k.cn.sftp.Stat(m.from)
	if err != nil {
		return "", err
	}
	m.src = src
	for i := 0; i <= MaxSuffix; i++ {
		to := path.Join(m.toDir, Numbered(m.name, i))
		if taken, err := exists(k.cn, to); err != nil || taken {
			if err != nil {
				return "", err
			}
			continue
		}
		m.pending = to
		err := k.cn.sftp.Rename(m.from, to)
		if err == nil {
			return to, nil
		}
		if !k.cn.alive() || transportError(err) {
			return "", err
		}
		// Refused: if the name was taken in the meantime, try the next one.
		if taken, xerr := exists(k.cn, to); xerr == nil && taken {
			continue
		}
		return "", fmt.Errorf("rename to %s: %w", to, err)
	}
	return "", fmt.Errorf("%s and %d numbered variants already exist in %s", m.name, MaxSuffix, m.toDir)
}

// happened reports whether the rename to m.pending, whose answer was lost,
// took effect. It is an error if from is gone but not at m.pending either.
func (m *mover) happened(cn *conn) (bool, error) {
	return landed(cn.sftp.Stat, m.from, m.pending, m.src,
		fmt.Errorf("%s disappeared while the connection was lost, and %s is not it", m.from, m.pending))
}

// landed reports whether a rename of from (src, as stat'ed before it) to
// to, whose answer was lost, took effect, looking at both names with stat:
// false while from is still there, true when to is src (a file of its
// size and modification time), and gone when from is gone and to is not
// it. Move and Rename share it; they differ in whether they follow links
// and in what a vanished from means to their callers.
func landed(stat func(string) (os.FileInfo, error), from, to string, src os.FileInfo, gone error) (bool, error) {
	if _, err := stat(from); err == nil {
		return false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	fi, err := stat(to)
	if err == nil && !fi.IsDir() && fi.Size() == src.Size() && fi.ModTime().Equal(src.ModTime()) {
		return true, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	return false, gone
}

func exists(cn *conn, p string) (bool, error) {
	_, err := cn.sftp.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Numbered returns name for i == 0, else name with "-i" before its
// extension: "pay.csv" -> "pay-2.csv", "README" -> "README-2",
// ".done" -> ".done-2". Move numbers a taken name this way.
func Numbered(name string, i int) string {
	if i == 0 {
		return name
	}
	ext := path.Ext(name)
	base := strings.TrimSuffix(name, ext)
	if base == "" {
		base, ext = name, ""
	}
	return fmt.Sprintf("%s-%d%s", base, i, ext)
}
