package state

import (
	"fmt"
)

// Open opens the ledger in dir (see openDir for what it creates and
// refuses), then seals every full account number an earlier build left
// in the clear, or under a key older than the ring's newest
// (SealAccounts). When it sealed numbers that were in the clear, it
// closes the ledger, compacts it, so that no freed page of the file
// keeps their digits, and opens it again. Rows whose number cannot be
// opened (a key lost) do not stop it: reading them is an error naming
// them, and `batchd keylost` settles them.
func Open(dir string, opts Options) (*DB, error) {
	d, err := openDir(dir, opts)
	if err != nil {
		return nil, err
	}
	rep, err := d.SealAccounts()
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("open state %s: %w", d.Path(), err)
	}
	if rep.Clear == 0 {
		return d, nil
	}
	made := d.keysMade
	if err := d.Close(); err != nil {
		return nil, fmt.Errorf("open state %s: close after sealing %d account numbers: %w", d.Path(), rep.Clear, err)
	}
	if _, err := Compact(dir, opts.Timeout); err != nil {
		return nil, fmt.Errorf("open state %s: compact after sealing %d account numbers, so that no freed page keeps them: %w",
			d.Path(), rep.Clear, err)
	}
	if d, err = openDir(dir, opts); err == nil {
		d.keysMade = made
	}
	return d, err
}
