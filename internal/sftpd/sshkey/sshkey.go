// Package sshkey creates the throwaway SSH keys and known_hosts files that
// batchd's demo server and test harnesses need. The keys are unencrypted and
// meant for loopback use only; production keys are made by operators with
// ssh-keygen.
package sshkey

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Generate creates a fresh ed25519 key, writes its private half to path in
// OpenSSH format with mode 0600 (sshd refuses keys that others can read) and
// its public half to path+".pub", and returns a signer for it. An existing
// file at path is replaced.
func Generate(path, comment string) (ssh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key %s: %w", path, err)
	}
	return write(path, comment, priv)
}

// GenerateECDSA is Generate for an ECDSA P-256 key, the other host key type
// a stock OpenSSH server has, and the one Go clients prefer by default.
func GenerateECDSA(path, comment string) (ssh.Signer, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key %s: %w", path, err)
	}
	return write(path, comment, priv)
}

func write(path, comment string, priv crypto.Signer) (ssh.Signer, error) {
	block, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		return nil, fmt.Errorf("marshal key %s: %w", path, err)
	}
	if err := writeFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, fmt.Errorf("signer for %s: %w", path, err)
	}
	if err := writeFile(path+".pub", ssh.MarshalAuthorizedKey(signer.PublicKey()), 0o644); err != nil {
		return nil, err
	}
	return signer, nil
}

// WriteKnownHosts writes a known_hosts file that pins keys for address
// ("host:port"), in the form OpenSSH and x/crypto/ssh/knownhosts read:
// "[127.0.0.1]:2222 ssh-ed25519 AAAA...". Each key gets its own line.
func WriteKnownHosts(path, address string, keys ...ssh.PublicKey) error {
	var b []byte
	for _, k := range keys {
		b = append(b, knownhosts.Line([]string{address}, k)...)
		b = append(b, '\n')
	}
	return writeFile(path, b, 0o644)
}

// WriteAuthorizedKeys writes an authorized_keys file admitting keys.
func WriteAuthorizedKeys(path string, keys ...ssh.PublicKey) error {
	var b []byte
	for _, k := range keys {
		b = append(b, ssh.MarshalAuthorizedKey(k)...)
	}
	return writeFile(path, b, 0o600)
}

// writeFile replaces path with data. It removes the old file first so that
// perm applies even when the file existed with wider permissions.
func writeFile(path string, data []byte, perm os.FileMode) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
