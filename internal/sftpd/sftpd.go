// Package sftpd is a small in-process SSH server that offers only SFTP, for
// "batchd demo" and for fast tests. It generates its own host and user keys
// and a known_hosts file, so a client configured from a Server connects with
// full host key verification, exactly as it would to a real server.
//
// Paths stay absolute, as on OpenSSH without a chroot: Root is where the demo
// keeps its inbox, and relative paths resolve against it. Unlike OpenSSH,
// the server's plain rename replaces an existing target (pkg/sftp calls
// os.Rename), and it offers no fsync@openssh.com extension. Hooks make it
// refuse requests as partners' servers do (no deletes, no renames, no
// dotfiles or dot folders, a quota), or drop the connection mid-transfer.
package sftpd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/batchd/batchd/internal/sftpd/sshkey"
)

// DefaultUser is the only user name the server admits.
const DefaultUser = "batchd"

// Server is a running SFTP server on a loopback port. The exported fields
// are what a client needs and are fixed after Start.
type Server struct {
	Addr               string // "127.0.0.1:PORT"
	KnownHostsFile     string // pins the host key for Addr
	IdentityFile       string // the only private key the server accepts
	User               string // the only user name the server accepts
	Root               string // absolute path of the SFTP area
	HostKeyFingerprint string // SHA256:... of the host key

	ln     net.Listener
	config *ssh.ServerConfig
	stop   func() bool // unregisters the context hook

	mu     sync.Mutex
	hooks  Hooks
	closed bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
	once   sync.Once
	err    error
}

// Start creates dir if needed, writes fresh keys and a known_hosts file into
// it, creates dir/root as Root, and serves on 127.0.0.1 on a free port
// until Close or until ctx is done. Keys from an earlier Start in the same
// dir are replaced, so a stale known_hosts can never match.
func Start(ctx context.Context, dir string) (*Server, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("sftpd: %w", err)
	}
	s := &Server{
		User:           DefaultUser,
		Root:           filepath.Join(dir, "root"),
		KnownHostsFile: filepath.Join(dir, "known_hosts"),
		IdentityFile:   filepath.Join(dir, "id_ed25519"),
		conns:          map[net.Conn]struct{}{},
	}
	if err := os.MkdirAll(s.Root, 0o700); err != nil {
		return nil, fmt.Errorf("sftpd: create root: %w", err)
	}
	host, err := sshkey.Generate(filepath.Join(dir, "ssh_host_ed25519_key"), "batchd sftpd host")
	if err != nil {
		return nil, fmt.Errorf("sftpd: %w", err)
	}
	user, err := sshkey.Generate(s.IdentityFile, "batchd sftpd client")
	if err != nil {
		return nil, fmt.Errorf("sftpd: %w", err)
	}
	s.config = serverConfig(host, s.User, user.PublicKey())
	s.HostKeyFingerprint = ssh.FingerprintSHA256(host.PublicKey())
	if s.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("sftpd: listen: %w", err)
	}
	s.Addr = s.ln.Addr().String()
	if err := sshkey.WriteKnownHosts(s.KnownHostsFile, s.Addr, host.PublicKey()); err != nil {
		s.ln.Close()
		return nil, fmt.Errorf("sftpd: %w", err)
	}
	s.stop = context.AfterFunc(ctx, func() { s.Close() })
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

// serverConfig admits exactly one user name with exactly one key.
func serverConfig(host ssh.Signer, user string, key ssh.PublicKey) *ssh.ServerConfig {
	want := key.Marshal()
	cfg := &ssh.ServerConfig{
		ServerVersion: "SSH-2.0-batchd-sftpd",
		PublicKeyCallback: func(c ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
			if c.User() == user && bytes.Equal(k.Marshal(), want) {
				return &ssh.Permissions{}, nil
			}
			return nil, errors.New("sftpd: key not authorized")
		},
	}
	cfg.AddHostKey(host)
	return cfg
}

// Close stops listening, closes every connection and waits for their
// goroutines to finish. It is safe to call more than once.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.stop()
		s.mu.Lock()
		s.closed = true
		s.err = s.ln.Close()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s.err
}

// DropConnections closes every open client connection, as a server crash
// would, and keeps accepting new ones. Tests use it to exercise reconnects.
func (s *Server) DropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
}

// track registers c so that Close can reach it; it reports false once the
// server is closing, and the caller must then drop c.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.Close()
	s.wg.Done()
}

// acceptLoop serves until the listener closes. Other accept errors (such as
// running out of file descriptors) pause it briefly, as net/http does,
// instead of ending the server.
func (s *Server) acceptLoop() {
	defer s.wg.Done()
	var delay time.Duration
	for {
		c, err := s.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			time.Sleep(delay)
			continue
		}
		delay = 0
		if !s.track(c) {
			c.Close()
			return
		}
		go s.serveConn(c)
	}
}
