// Package acctseal keeps full bank account numbers unreadable at rest.
// The ledger seals an account number (AES-256-GCM) before it writes a
// row and opens it when it reads one, so the domain only ever holds the
// number in memory, while a ledger file, a backup or a database dump
// holds ciphertext. Keys live in a key ring file beside the ledger (or
// wherever the operator names), never in the YAML: the newest key seals,
// every key opens, so keys can be rotated (batchd rekey) without a stop.
package acctseal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// KeySize is the size of every key: AES-256.
const KeySize = 32

// ErrKeyMissing is wrapped when a sealed value names a key the ring does
// not hold: the key was lost or not copied to this host.
var ErrKeyMissing = errors.New("account key missing from the key ring")

// ErrDamaged is wrapped when a sealed value cannot be opened by its key:
// the value was damaged or moved from another row.
var ErrDamaged = errors.New("sealed account number damaged")

// Ring is a set of keys, each with an id. The newest (the file's last)
// seals; all open. Ids are random, so that a ring made after one was
// lost never reuses a lost key's id: a value sealed under the lost key
// is then ErrKeyMissing, never mistaken for the new key's. A Ring is safe
// for concurrent use once made.
type Ring struct {
	keys   map[uint32]cipher.AEAD
	ids    []uint32 // in file order, the newest last
	newest uint32
	rand   io.Reader
}

// Parse reads a key ring file: one key a line, "id base64-key", ids
// positive and distinct, the newest last, blank lines and lines starting
// with '#' ignored.
// Errors name the line, never a key.
func Parse(text []byte) (*Ring, error) {
	r := &Ring{keys: map[uint32]cipher.AEAD{}, rand: rand.Reader}
	for n, line := range bytes.Split(text, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if err := r.addLine(string(line)); err != nil {
			return nil, fmt.Errorf("account key ring line %d: %w", n+1, err)
		}
	}
	if len(r.ids) == 0 {
		return nil, errors.New("account key ring holds no key")
	}
	return r, nil
}

func (r *Ring) addLine(line string) error {
	idText, keyText, ok := strings.Cut(line, " ")
	if !ok {
		return errors.New(`want "id base64-key"`)
	}
	id, err := strconv.ParseUint(idText, 10, 32)
	if err != nil || id == 0 {
		return fmt.Errorf("key id %q is not a positive number", idText)
	}
	if _, dup := r.keys[uint32(id)]; dup {
		return fmt.Errorf("key id %d is there twice", id)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keyText))
	if err != nil || len(key) != KeySize {
		return fmt.Errorf("key %d is not %d bytes of base64", id, KeySize)
	}
	aead, err := newAEAD(key)
	clear(key)
	if err != nil {
		return fmt.Errorf("key %d: %w", id, err)
	}
	r.keys[uint32(id)] = aead
	r.ids = append(r.ids, uint32(id))
	r.newest = uint32(id)
	return nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Newest is the id of the key that seals.
func (r *Ring) Newest() uint32 { return r.newest }

// Holds reports whether the ring has the key id.
func (r *Ring) Holds(id uint32) bool {
	_, ok := r.key(id)
	return ok
}

// IDs are the ids of the ring's keys, oldest first.
func (r *Ring) IDs() []uint32 { return append([]uint32(nil), r.ids...) }

// NewKeyLine returns a ring file line holding a fresh random key with
// id, read from rnd (crypto/rand.Reader outside tests).
func NewKeyLine(rnd io.Reader, id uint32) (string, error) {
	key := make([]byte, KeySize)
	defer clear(key)
	if _, err := io.ReadFull(rnd, key); err != nil {
		return "", fmt.Errorf("make account key %d: %w", id, err)
	}
	return fmt.Sprintf("%d %s\n", id, base64.StdEncoding.EncodeToString(key)), nil
}

// Header is the comment a new ring file starts with.
const Header = "# batchd account-number keys: one a line, \"id base64-key\"; the last seals, every key opens.\n" +
	"# Losing this file makes the full account numbers of unsent rows unreadable. Back it up apart from the ledger.\n"

// NewID is a random key id, nonzero and none of r's (r may be nil).
func NewID(rnd io.Reader, r *Ring) (uint32, error) {
	for {
		var b [4]byte
		if _, err := io.ReadFull(rnd, b[:]); err != nil {
			return 0, fmt.Errorf("make an account key id: %w", err)
		}
		id := binary.BigEndian.Uint32(b[:])
		if _, taken := r.key(id); id != 0 && !taken {
			return id, nil
		}
	}
}

func (r *Ring) key(id uint32) (cipher.AEAD, bool) {
	if r == nil {
		return nil, false
	}
	k, ok := r.keys[id]
	return k, ok
}

// Generate returns the text of a new ring file with one key.
func Generate(rnd io.Reader) ([]byte, error) {
	id, err := NewID(rnd, nil)
	if err != nil {
		return nil, err
	}
	line, err := NewKeyLine(rnd, id)
	if err != nil {
		return nil, err
	}
	return []byte(Header + line), nil
}
