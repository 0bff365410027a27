package remote

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// Remove deletes the file at p; a file already gone is not an error, so
// that a call repeated on a new connection after a lost answer succeeds.
// batchd doctor uses it to take away the probe file it wrote to test that
// a folder is writable.
func (c *Client) Remove(ctx context.Context, p string) error {
	err := c.do(ctx, true, func(k *call) error { return k.cn.sftp.Remove(p) })
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return fmt.Errorf("sftp remove %s: %w", p, err)
}
