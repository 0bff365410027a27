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
