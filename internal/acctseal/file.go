package acctseal

import (
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// FileName is the ring file's name in the state directory, where batchd
// makes one when none is configured.
const FileName = "account-keys"

// maxFileBytes bounds the read of a ring file: a few hundred keys.
const maxFileBytes = 64 << 10

// Load reads the ring file at path, refusing it, as every secret file is
// refused (config.ReadSecretFile), unless it is a regular file its group
// and others may neither read nor write. Errors name the file, never a
// key.
func Load(path string) (*Ring, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read account key ring: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	switch {
	case err != nil:
		return nil, fmt.Errorf("read account key ring %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("read account key ring %s: not a regular file", path)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("read account key ring %s: readable or writable by others than its owner (mode %04o); fix: chmod 600 %s",
			path, fi.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(fh, maxFileBytes+1))
	defer clear(b)
	if err != nil {
		return nil, fmt.Errorf("read account key ring %s: %w", path, err)
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("read account key ring %s: larger than %d bytes", path, maxFileBytes)
	}
	r, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return r, nil
}

// LoadOrCreate is Load, after making the file (mode 0600, one new key)
// when it does not exist. made says it was made, so the caller can say
// where: the operator must back the file up apart from the ledger.
func LoadOrCreate(path string) (r *Ring, made bool, err error) {
	text, err := Generate(rand.Reader)
	if err != nil {
		return nil, false, err
	}
	defer clear(text)
	switch err := writeNew(path, text); {
	case err == nil:
		made = true
	case !errors.Is(err, fs.ErrExist):
		return nil, false, fmt.Errorf("make account key ring %s: %w", path, err)
	}
	r, err = Load(path)
	return r, made, err
}

// writeNew writes text to a new file at path, 0600, synced; it fails
// with fs.ErrExist when the file exists.
func writeNew(path string, text []byte) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := fh.Write(text); err != nil {
		fh.Close()
		os.Remove(path)
		return err
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		os.Remove(path)
		return err
	}
	return fh.Close()
}

// InClear returns the ring of a ledger that keeps account numbers in the
// clear, as builds before sealing did: a shared ledger (PostgreSQL) given
// no ring file, since a ring made on one host would leave the others
// unable to read the rows. It seals nothing and opens only numbers in the
// clear; a sealed one is ErrKeyMissing. `batchd check` names the rows it
// finds in the clear.
func InClear() *Ring { return &Ring{keys: map[uint32]cipher.AEAD{}} }

// Clear reports whether r seals nothing (InClear).
func (r *Ring) Clear() bool { return len(r.keys) == 0 }

// Ephemeral returns a ring with one random key that lives in memory only:
// for ledgers that are given no ring file (tests, a shared store opened
// without one). What it seals is unreadable after the process ends.
func Ephemeral() (*Ring, error) {
	text, err := Generate(rand.Reader)
	if err != nil {
		return nil, err
	}
	defer clear(text)
	return Parse(text)
}
