package acctseal

import (
	"bytes"
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

// MaxFileBytes bounds the read of a ring file: a few hundred keys.
const MaxFileBytes = 64 << 10

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
	b, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	defer clear(b)
	if err != nil {
		return nil, fmt.Errorf("read account key ring %s: %w", path, err)
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("read account key ring %s: larger than %d bytes", path, MaxFileBytes)
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
// clear, as builds before sealing did: a shared ledger (PostgreSQL)
// opened by code that gives it no ring (batchd's configuration requires
// one), since a ring made on one host would leave the others unable to
// read the rows. It seals nothing and opens only numbers in the
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

// AddKey appends a new random key, with a new random id, to the ring file
// at path, and returns that id: from now on it seals. The file
// is replaced whole (a new file renamed over it, 0600), so a crash leaves
// the old ring or the new, never half of one.
func AddKey(path string) (uint32, error) {
	text, err := readRing(path)
	defer clear(text)
	if err != nil {
		return 0, err
	}
	r, err := Parse(text)
	if err != nil {
		return 0, fmt.Errorf("add a key to %s: %w", path, err)
	}
	id, err := NewID(rand.Reader, r)
	if err != nil {
		return 0, err
	}
	line, err := NewKeyLine(rand.Reader, id)
	if err != nil {
		return 0, err
	}
	if len(text) > 0 && text[len(text)-1] != '\n' {
		text = append(text, '\n')
	}
	if err := replace(path, append(text, line...)); err != nil {
		return 0, fmt.Errorf("add a key to %s: %w", path, err)
	}
	return id, nil
}

// DropOldKeys rewrites the ring file at path with its newest key alone:
// after every row was sealed under it (batchd rekey), the old keys only
// open backups made before, which the operator keeps with a copy of the
// old file.
func DropOldKeys(path string) error {
	text, err := readRing(path)
	defer clear(text)
	if err != nil {
		return err
	}
	var newest []byte
	for _, line := range bytes.Split(text, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			newest = t
		}
	}
	if newest == nil {
		return fmt.Errorf("drop old keys of %s: the ring holds no key", path)
	}
	out := append([]byte(Header), newest...)
	if err := replace(path, append(out, '\n')); err != nil {
		return fmt.Errorf("drop old keys of %s: %w", path, err)
	}
	return nil
}

// readRing reads the ring file at path with Load's checks.
func readRing(path string) ([]byte, error) {
	if _, err := Load(path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read account key ring %s: %w", path, err)
	}
	return b, nil
}

// replace writes text to a new file beside path and renames it over path.
func replace(path string, text []byte) error {
	tmp := path + ".new"
	os.Remove(tmp)
	if err := writeNew(tmp, text); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
