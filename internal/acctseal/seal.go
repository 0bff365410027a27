package acctseal

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// A sealed value is text, so that it fits every stored form (the binary
// row codec's strings and the JSON of funding rows): Prefix, then the
// unpadded URL-safe base64 of
//
//	byte     version (1)
//	uvarint  key id
//	12 bytes nonce (random)
//	rest     AES-GCM ciphertext and tag of the account number, with the
//	         caller's associated data (the row's key), so a value moved
//	         to another row does not open
//
// Prefix is no digit, so a value is never mistaken for an account number
// or the other way round.
const Prefix = "~"

const version = 1

// Sealed reports whether s is a sealed value (Seal's form) rather than a
// number in the clear.
func Sealed(s string) bool { return strings.HasPrefix(s, Prefix) }

// Seal returns plain sealed under the newest key, bound to aad. The empty
// string stays empty: there is nothing to hide, and rows without an
// account keep their size.
func (r *Ring) Seal(plain string, aad []byte) (string, error) {
	if plain == "" || Sealed(plain) {
		return plain, nil
	}
	if r == nil {
		return "", errors.New("seal account number: no key ring")
	}
	if r.Clear() {
		return plain, nil
	}
	aead := r.keys[r.newest]
	b := make([]byte, 0, 1+binary.MaxVarintLen32+aead.NonceSize()+len(plain)+aead.Overhead())
	b = append(b, version)
	b = binary.AppendUvarint(b, uint64(r.newest))
	nonceAt := len(b)
	b = b[:nonceAt+aead.NonceSize()]
	if _, err := r.rand.Read(b[nonceAt:]); err != nil {
		return "", fmt.Errorf("seal account number: read a nonce: %w", err)
	}
	b = aead.Seal(b, b[nonceAt:], []byte(plain), aad)
	return Prefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// Open returns the account number sealed in s with aad; s not sealed is
// returned as it is (a row written before sealing, or an empty one).
// Errors wrap ErrKeyMissing or ErrDamaged and never hold s.
func (r *Ring) Open(s string, aad []byte) (string, error) {
	if !Sealed(s) {
		return s, nil
	}
	id, err := KeyID(s)
	if err != nil {
		return "", err
	}
	if r == nil {
		return "", fmt.Errorf("%w: key %d (no key ring)", ErrKeyMissing, id)
	}
	aead, ok := r.keys[id]
	if !ok {
		return "", fmt.Errorf("%w: key %d", ErrKeyMissing, id)
	}
	b, _ := base64.RawURLEncoding.DecodeString(s[len(Prefix):])
	_, n := binary.Uvarint(b[1:])
	body := b[1+n:]
	if len(body) < aead.NonceSize()+aead.Overhead() {
		return "", fmt.Errorf("%w: too short", ErrDamaged)
	}
	plain, err := aead.Open(nil, body[:aead.NonceSize()], body[aead.NonceSize():], aad)
	if err != nil {
		return "", fmt.Errorf("%w: it does not open under key %d", ErrDamaged, id)
	}
	return string(plain), nil
}

// KeyID is the id of the key s was sealed under.
func KeyID(s string) (uint32, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, Prefix))
	if err != nil || len(b) < 2 {
		return 0, fmt.Errorf("%w: not base64", ErrDamaged)
	}
	if b[0] != version {
		return 0, fmt.Errorf("%w: unknown version %d", ErrDamaged, b[0])
	}
	id, n := binary.Uvarint(b[1:])
	if n <= 0 || id == 0 || id > 1<<32-1 {
		return 0, errors.Join(ErrDamaged, errors.New("bad key id"))
	}
	return uint32(id), nil
}
