package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/pkg/sftp"
)

// List returns the entries of dir sorted by name, directories included.
// Entries are not followed: a symlink is reported as one.
func (c *Client) List(ctx context.Context, dir string) ([]FileInfo, error) {
	var out []FileInfo
	err := c.do(ctx, true, func(k *call) error {
		fis, err := k.cn.sftp.ReadDirContext(ctx, dir)
		if err != nil {
			return err
		}
		out = make([]FileInfo, 0, len(fis))
		for _, fi := range fis {
			out = append(out, fileInfo(fi))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sftp list %s: %w", dir, err)
	}
	slices.SortFunc(out, func(a, b FileInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Stat describes the file at p, following symlinks. A missing file gives an
// error matching fs.ErrNotExist.
func (c *Client) Stat(ctx context.Context, p string) (FileInfo, error) {
	return c.describe(ctx, "stat", p, (*sftp.Client).Stat)
}

// Lstat describes the entry at p itself: a symbolic link is described as
// a link, not followed. A missing entry gives an error matching
// fs.ErrNotExist.
func (c *Client) Lstat(ctx context.Context, p string) (FileInfo, error) {
	return c.describe(ctx, "lstat", p, (*sftp.Client).Lstat)
}

// describe is Stat and Lstat, which differ only in the SFTP request (op):
// stat follows links, lstat does not.
func (c *Client) describe(ctx context.Context, op, p string, stat func(*sftp.Client, string) (os.FileInfo, error)) (FileInfo, error) {
	var fi FileInfo
	err := c.do(ctx, true, func(k *call) error {
		st, err := stat(k.cn.sftp, p)
		if err == nil {
			fi = fileInfo(st)
			fi.Name = path.Base(p)
		}
		return err
	})
	if err != nil {
		return FileInfo{}, fmt.Errorf("sftp %s %s: %w", op, p, err)
	}
	return fi, nil
}

// Exists reports whether p exists. Errors other than "does not exist" (no
// permission, a lost connection) are returned, not taken for absence.
func (c *Client) Exists(ctx context.Context, p string) (bool, error) {
	_, err := c.Stat(ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// MkdirAll creates dir and any missing parents, like os.MkdirAll.
func (c *Client) MkdirAll(ctx context.Context, dir string) error {
	err := c.do(ctx, true, func(k *call) error { return k.cn.sftp.MkdirAll(dir) })
	if err != nil {
		return fmt.Errorf("sftp mkdir %s: %w", dir, err)
	}
	return nil
}

// ReadFile returns the contents of a small file, such as a .done marker. A
// file longer than max bytes is an error, so a wrong path cannot make batchd
// read a large file into memory.
func (c *Client) ReadFile(ctx context.Context, p string, max int64) ([]byte, error) {
	if max < 0 {
		return nil, fmt.Errorf("sftp read %s: negative limit %d", p, max)
	}
	var b []byte
	err := c.do(ctx, true, func(k *call) error {
		f, err := k.cn.sftp.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		b, err = io.ReadAll(io.LimitReader(f, max+1))
		if err != nil {
			return err
		}
		if int64(len(b)) > max {
			return fmt.Errorf("file is larger than %d bytes", max)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sftp read %s: %w", p, err)
	}
	return b, nil
}

func fileInfo(fi os.FileInfo) FileInfo {
	return FileInfo{Name: fi.Name(), Size: fi.Size(), ModTime: fi.ModTime(), IsDir: fi.IsDir(), Mode: fi.Mode()}
}

// checkName rejects names that are not a single path element, so that a
// name from a file listing or a report cannot escape its directory.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("invalid file name %q: want a single path element", name)
	}
	return nil
}
