package state

import (
	"fmt"
	"path/filepath"

	"github.com/batchd/batchd/internal/acctseal"
)

// accountKeys is the key ring a ledger seals account numbers with:
// opts.AccountKeys, else the ring file opts.AccountKeysFile names, else
// the ring file in the ledger file's directory dir, made (mode 0600, one
// new key) when missing so that a new installation, the demo above all,
// needs no set-up; made is then its path, for the caller to say which
// file to back up (a key is never logged). A shared store (dir "") given
// neither keeps numbers in the clear (acctseal.InClear), since a ring
// made on one host would leave the other instances unable to read the
// rows: only code that opens a store itself does so (tests); batchd's
// configuration refuses a postgres ledger without
// state.account_keys_file.
func accountKeys(opts Options, dir string) (ring *acctseal.Ring, made string, err error) {
	switch {
	case opts.AccountKeys != nil:
		return opts.AccountKeys, "", nil
	case opts.AccountKeysFile != "":
		ring, err = acctseal.Load(opts.AccountKeysFile)
		return ring, "", err
	case dir == "":
		return acctseal.InClear(), "", nil
	}
	path := filepath.Join(dir, acctseal.FileName)
	ring, isNew, err := acctseal.LoadOrCreate(path)
	if err != nil {
		return nil, "", fmt.Errorf("account numbers' key ring: %w", err)
	}
	if isNew {
		made = path
	}
	return ring, made, nil
}

// AccountKeysMade is the path of the key ring file this Open made, or ""
// when it read one (or was given one): the caller tells the operator to
// back the file up apart from the ledger.
func (d *DB) AccountKeysMade() string { return d.keysMade }
