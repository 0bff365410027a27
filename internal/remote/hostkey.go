package remote

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyError means the server's host key is not the one pinned in
// known_hosts: the host is unknown, its key changed (perhaps someone is in
// the middle), or the key is revoked. batchd refuses to connect, and does not
// retry: only an operator can decide which key is right.
type HostKeyError struct {
	Address     string // the address dialled
	KeyType     string // type of the key the server presented, e.g. "ssh-ed25519"
	Fingerprint string // SHA256 fingerprint of the presented key
	KnownHosts  string // the known_hosts file consulted
	Lines       []int  // lines pinning other keys for the host, or revoking this key
	Revoked     bool
}

// Unknown reports whether known_hosts has no key at all for the host.
func (e *HostKeyError) Unknown() bool { return !e.Revoked && len(e.Lines) == 0 }

func (e *HostKeyError) Error() string {
	key := fmt.Sprintf("the server's %s key %s", e.KeyType, e.Fingerprint)
	switch {
	case e.Revoked:
		return fmt.Sprintf("sftp %s: host key revoked: %s is marked @revoked in %s (%s); refusing to connect",
			e.Address, key, e.KnownHosts, lineList(e.Lines))
	case e.Unknown():
		return fmt.Sprintf("sftp %s: unknown host: %s is not in known_hosts %s; add it with ssh-keyscan after checking its fingerprint; refusing to connect",
			e.Address, key, e.KnownHosts)
	default:
		return fmt.Sprintf("sftp %s: host key mismatch: %s is not the one pinned in %s (%s); refusing to connect",
			e.Address, key, e.KnownHosts, lineList(e.Lines))
	}
}

func lineList(lines []int) string {
	s := make([]string, len(lines))
	for i, l := range lines {
		s[i] = strconv.Itoa(l)
	}
	if len(s) == 1 {
		return "line " + s[0]
	}
	return "lines " + strings.Join(s, ", ")
}

// hostKeys is what the SSH handshake needs from known_hosts.
type hostKeys struct {
	callback   ssh.HostKeyCallback
	algorithms []string               // host key algorithms pinned for the address; nil lets the server choose
	seen       atomic.Pointer[string] // fingerprint of the key the server presented last
}

// loadHostKeys reads path and prepares verification for address.
func loadHostKeys(path, address string) (*hostKeys, error) {
	check, err := knownhosts.New(path)
	if err != nil {
		return nil, fmt.Errorf("sftp %s: read known_hosts: %w", address, err)
	}
	hk := &hostKeys{algorithms: pinnedAlgorithms(check, address)}
	hk.callback = func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		fp := ssh.FingerprintSHA256(key)
		hk.seen.Store(&fp)
		if err := check(hostname, remote, key); err != nil {
			return hostKeyError(address, path, key, err)
		}
		return nil
	}
	return hk, nil
}

func hostKeyError(address, path string, key ssh.PublicKey, err error) error {
	e := &HostKeyError{Address: address, KeyType: key.Type(), Fingerprint: ssh.FingerprintSHA256(key), KnownHosts: path}
	var ke *knownhosts.KeyError
	var re *knownhosts.RevokedError
	switch {
	case errors.As(err, &re):
		e.Revoked, e.Lines = true, []int{re.Revoked.Line}
	case errors.As(err, &ke):
		for _, w := range ke.Want {
			e.Lines = append(e.Lines, w.Line)
		}
	default:
		return fmt.Errorf("sftp %s: host key check: %w", address, err)
	}
	return e
}

// pinnedAlgorithms lists the host key algorithms of the keys pinned for
// address, so that a server with several host keys presents the pinned
// one; by default a client would accept the server's first preference and
// then report a spurious mismatch. It asks the known_hosts check about a
// throwaway key, which cannot match, and reads the pinned keys from the
// KeyError.
func pinnedAlgorithms(check ssh.HostKeyCallback, address string) []string {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil
	}
	probe, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil
	}
	var ke *knownhosts.KeyError
	if !errors.As(check(address, addrString(address), probe), &ke) {
		return nil
	}
	var algos []string
	seen := map[string]bool{}
	for _, w := range ke.Want {
		for _, a := range algorithmsFor(w.Key.Type()) {
			if !seen[a] {
				seen[a] = true
				algos = append(algos, a)
			}
		}
	}
	return algos
}

// algorithmsFor maps a key type to the signature algorithms that prove it:
// an RSA key is offered as rsa-sha2-512 or rsa-sha2-256 by modern servers.
func algorithmsFor(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{keyType}
}

// addrString is a net.Addr for a "host:port" string.
type addrString string

func (a addrString) Network() string { return "tcp" }
func (a addrString) String() string  { return string(a) }
