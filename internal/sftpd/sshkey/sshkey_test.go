package sshkey_test

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/batchd/batchd/internal/sftpd/sshkey"
)

func TestGeneratedKeysRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for name, gen := range map[string]func(string, string) (ssh.Signer, error){
		"ed25519": sshkey.Generate, "ecdsa": sshkey.GenerateECDSA,
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			// An existing, world-readable file is replaced with a private one.
			if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			signer, err := gen(p, "test")
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(p)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("mode %v, %v; want 0600", fi.Mode().Perm(), err)
			}
			b, _ := os.ReadFile(p)
			parsed, err := ssh.ParsePrivateKey(b)
			if err != nil || !bytes.Equal(parsed.PublicKey().Marshal(), signer.PublicKey().Marshal()) {
				t.Fatalf("private key does not parse back: %v", err)
			}
			pub, _ := os.ReadFile(p + ".pub")
			k, _, _, _, err := ssh.ParseAuthorizedKey(pub)
			if err != nil || !bytes.Equal(k.Marshal(), signer.PublicKey().Marshal()) {
				t.Fatalf(".pub does not match: %v", err)
			}
		})
	}
}

func TestKnownHostsPinsKeyForAddress(t *testing.T) {
	dir := t.TempDir()
	a, _ := sshkey.Generate(filepath.Join(dir, "a"), "")
	b, _ := sshkey.Generate(filepath.Join(dir, "b"), "")
	kh := filepath.Join(dir, "known_hosts")
	if err := sshkey.WriteKnownHosts(kh, "127.0.0.1:2222", a.PublicKey()); err != nil {
		t.Fatal(err)
	}
	check, err := knownhosts.New(kh)
	if err != nil {
		t.Fatal(err)
	}
	remote := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2222}
	if err := check("127.0.0.1:2222", remote, a.PublicKey()); err != nil {
		t.Errorf("pinned key rejected: %v", err)
	}
	if err := check("127.0.0.1:2222", remote, b.PublicKey()); err == nil {
		t.Error("other key accepted")
	}
	if err := check("127.0.0.1:22", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 22}, a.PublicKey()); err == nil {
		t.Error("key accepted for another port")
	}
}
