// Package payee tells when a known payee's bank account changed (README
// "Payee bank-detail changes"): it names a payee by a key (a payee_id, or
// the name and e-mail normalised), and an account by its last four digits,
// length and a keyed hash (HMAC-SHA256) of routing and account, so that
// the ledger can remember the account last paid without holding the
// number.
package payee

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
)

// KeyFile is the hash key's file name in the state directory.
const KeyFile = "payee.key"

// keyBytes is the size of the hash key.
const keyBytes = 32

// Key is the installation's secret hash key. Without it a stored hash
// cannot be tested against guessed account numbers, so it lives in its own
// file (mode 0600), never in the ledger or its backups.
type Key struct {
	secret []byte
	id     string
	macs   sync.Pool // of HMAC states keyed with secret: one per row is costly
}

// LoadKey reads the key in dir, creating it (mode 0600) on first use. A
// key file that others may read, or of the wrong size, is refused.
func LoadKey(dir string) (*Key, error) {
	path := filepath.Join(dir, KeyFile)
	secret, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		secret, err = createKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("payee hash key %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("payee hash key %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("payee hash key %s: mode %v lets others read it; chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	if len(secret) != keyBytes {
		return nil, fmt.Errorf("payee hash key %s: %d bytes, want %d; restore it from backup (or remove it: every payee is then new)", path, len(secret), keyBytes)
	}
	return NewKey(secret), nil
}

// createKey writes a new random key at path, never replacing one another
// process wrote meanwhile.
func createKey(path string) ([]byte, error) {
	secret := make([]byte, keyBytes)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(secret); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	return secret, f.Close()
}

// NewKey is a key from its secret bytes (tests; LoadKey otherwise).
func NewKey(secret []byte) *Key {
	k := &Key{secret: append([]byte(nil), secret...)}
	k.id = k.mac("key-id")[:16]
	return k
}

// hashHex is how many hex digits of an HMAC are kept: 128 bits tell
// accounts and payees apart beyond any chance of a collision, in half the
// ledger's bytes.
const hashHex = 32

// ID names the key without revealing it: hashes made with another key
// (a lost key file replaced) are not compared.
func (k *Key) ID() string { return k.id }

func (k *Key) mac(parts ...string) string {
	h, _ := k.macs.Get().(hash.Hash)
	if h == nil {
		h = hmac.New(sha256.New, k.secret)
	}
	h.Reset()
	for i, p := range parts {
		if i > 0 {
			h.Write([]byte{0})
		}
		io.WriteString(h, p)
	}
	var sum [sha256.Size]byte
	out := hex.EncodeToString(h.Sum(sum[:0])[:hashHex/2])
	k.macs.Put(h)
	return out
}

// Name is the payee key of a row: its payee_id when given (PayeeID),
// else the name and e-mail; each trimmed, case-folded and with runs of
// spaces made one.
func Name(p *payment.Payment) string {
	if id := normal(p.PayeeID); id != "" {
		return "id:" + id
	}
	return "name:" + normal(p.Name) + "\x00" + normal(p.Email)
}

func normal(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// Payee is the keyed hash of a payee key, as the ledger stores it.
func (k *Key) Payee(name string) string { return k.mac("payee", name) }

// Account is what the ledger keeps of p's bank account: last four digits,
// length and a keyed hash of routing and account (a different routing
// number is a different account). ok is false for a row paid to a stored
// account (token), which has no number to compare.
func (k *Key) Account(p *payment.Payment) (acct payment.PayeeAccount, ok bool) {
	if p.BankAccount == "" {
		return payment.PayeeAccount{}, false
	}
	return payment.PayeeAccount{KeyID: k.id, Hash: k.mac("account", p.BankRouting, p.BankAccount),
		Last4: redact.Last4(p.BankAccount), Length: len(p.BankAccount)}, true
}
