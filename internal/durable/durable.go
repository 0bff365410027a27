// Package durable holds the one step every writer of a file that must
// survive a crash takes after creating or renaming it: syncing the
// directory, so that the new name itself is on disk. The ledger, the
// downloads and the reports each wrote it themselves before.
package durable

import (
	"fmt"
	"os"
)

// SyncDir makes a rename or a new file in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}
