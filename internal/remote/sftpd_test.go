package remote_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/sftpd"
	"github.com/batchd/batchd/internal/sftpd/sshkey"
)

// These tests use the in-process server: they are fast, and they can put a
// proxy between client and server to simulate a peer that goes silent.

func startSFTPD(t *testing.T) (*sftpd.Server, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := sftpd.Start(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func sftpdOptions(s *sftpd.Server) remote.Options {
	return remote.Options{Address: s.Addr, User: s.User, IdentityFile: s.IdentityFile, KnownHosts: s.KnownHostsFile}
}

func generateKey(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "id_other")
	if _, err := sshkey.Generate(p, "other"); err != nil {
		t.Fatal(err)
	}
	return p
}

// assertNoKeyMaterial fails if any line of the key file's body appears in s.
func assertNoKeyMaterial(t *testing.T, keyFile, s string) {
	t.Helper()
	b, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if len(line) >= 16 && !strings.HasPrefix(line, "-----") && strings.Contains(s, line) {
			t.Fatalf("private key material leaked: %q", line)
		}
	}
}

func TestDialRequiresKnownHosts(t *testing.T) {
	s, _ := startSFTPD(t)
	o := sftpdOptions(s)
	o.KnownHosts = ""
	if _, err := remote.Dial(ctxT(t), o); err == nil || !strings.Contains(err.Error(), "known_hosts file is required") {
		t.Fatalf("Dial without known_hosts: %v", err)
	}
	o.KnownHosts = filepath.Join(t.TempDir(), "missing")
	if _, err := remote.Dial(ctxT(t), o); err == nil || !strings.Contains(err.Error(), o.KnownHosts) {
		t.Fatalf("Dial with a missing known_hosts: %v", err)
	}
}

// lockedKey is an ed25519 key protected by the passphrase "hunter2", made
// with "ssh-keygen -a 1" (one KDF round: generating one in the test would
// spend seconds in bcrypt under the race detector).
const lockedKey = `-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABDrjOXXB3
n+0+tdqSZUReXaAAAAAQAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIC5wPpZVZwmgVfEC
rO4rY5UOX/R5/fMfQFB5yVn2VzeuAAAAkNqQEpq28flHfzvKp4i5QWfSZncQ+I6bFy5xS+
osfng5H9+3vDRrf1AsaMfJ/AtgqSALkZbpqjmNB2Way8OgTOBl1lT1b8vaFdhAWjvCgwgm
u/aZQNKdqIBL6s2PKtM70E0/FDBH7hbGm/P5hw1Q82iIl1f1+vRBwBgVh9a2tzUt3VUhhu
5cKWYzY0gRG7F5VA==
-----END OPENSSH PRIVATE KEY-----
`

func TestIdentityFileErrorsAreClearAndSecret(t *testing.T) {
	s, _ := startSFTPD(t)
	dir := t.TempDir()
	locked := filepath.Join(dir, "locked")
	writeFile(t, locked, lockedKey)
	garbage := filepath.Join(dir, "garbage")
	writeFile(t, garbage, "-----BEGIN OPENSSH PRIVATE KEY-----\nc2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0\n-----END OPENSSH PRIVATE KEY-----\n")

	for _, tc := range []struct{ file, want string }{
		{locked, "protected by a passphrase"},
		{garbage, "not a usable private key"},
		{filepath.Join(dir, "missing"), "no such file"},
	} {
		o := sftpdOptions(s)
		o.IdentityFile = tc.file
		_, err := remote.Dial(ctxT(t), o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", filepath.Base(tc.file), err, tc.want)
			continue
		}
		if tc.file != filepath.Join(dir, "missing") {
			assertNoKeyMaterial(t, tc.file, err.Error())
		}
	}
}

func TestPrivateKeyNeverLogged(t *testing.T) {
	s, _ := startSFTPD(t)
	var logs logBuffer
	o := sftpdOptions(s)
	o.Logger = logs.logger()
	c := dial(t, o)
	if _, err := c.List(ctxT(t), s.Root); err != nil {
		t.Fatal(err)
	}
	c.Close()
	mustContain(t, logs.String(), "sftp connected", s.HostKeyFingerprint)
	assertNoKeyMaterial(t, s.IdentityFile, logs.String())
}

func TestClosedClient(t *testing.T) {
	s, _ := startSFTPD(t)
	c := dial(t, sftpdOptions(s))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.List(ctxT(t), s.Root); !errors.Is(err, remote.ErrClosed) {
		t.Fatalf("List after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestReconnectIsBoundedByContext(t *testing.T) {
	s, _ := startSFTPD(t)
	c := dial(t, sftpdOptions(s))
	s.Close()
	ctx, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
	defer cancel()
	_, err := c.List(ctx, s.Root)
	if !errors.Is(err, remote.ErrConnectionLost) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("List with the server gone: %v", err)
	}
	mustContain(t, err.Error(), "reconnect", "connection refused")
	t.Log(err)
}

// After a reconnect the host key is checked again against a re-read
// known_hosts: a server whose key changed meanwhile is refused, at once.
func TestChangedHostKeyOnReconnectIsRefused(t *testing.T) {
	s, _ := startSFTPD(t)
	c := dial(t, sftpdOptions(s))
	other, err := sshkey.Generate(filepath.Join(t.TempDir(), "k"), "impostor")
	if err != nil {
		t.Fatal(err)
	}
	if err := sshkey.WriteKnownHosts(s.KnownHostsFile, s.Addr, other.PublicKey()); err != nil {
		t.Fatal(err)
	}
	s.DropConnections()
	_, err = c.List(ctxT(t), s.Root)
	var hke *remote.HostKeyError
	if !errors.As(err, &hke) {
		t.Fatalf("List = %v, want a host key error", err)
	}
	mustContain(t, err.Error(), "host key mismatch", s.HostKeyFingerprint)
}

// Cancelling an upload blocked on its reader abandons it; the temporary file
// is removed (over a new connection, since cancelling closed the old one).
func TestCancelledUploadRemovesTemporaryFile(t *testing.T) {
	s, _ := startSFTPD(t)
	c := dial(t, sftpdOptions(s))
	ctx, cancel := context.WithCancel(ctxT(t))
	r := newGateReader(make([]byte, 100000), nil)
	// Like any context-aware source, the reader ends with the
	// cancellation; without this the test would race the asynchronous
	// close of the connection against the rest of the upload.
	r.err = context.Canceled
	done := make(chan error, 1)
	go func() { done <- c.Upload(ctx, s.Root, "r.csv", r) }()
	<-r.reached
	eventually(t, "temporary file", func() bool { return len(names(t, s.Root)) == 1 })
	cancel()
	close(r.release)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Upload = %v, want context.Canceled", err)
	}
	if n := names(t, s.Root); len(n) != 0 {
		t.Fatalf("root holds %v after a cancelled upload", n)
	}
}

// The concurrent upload path, with a seekable reader, and replacement of an
// existing file through posix-rename.
func TestUploadReplacesAndDownloadRoundTrips(t *testing.T) {
	s, _ := startSFTPD(t)
	c := dial(t, sftpdOptions(s))
	ctx := ctxT(t)
	writeFile(t, filepath.Join(s.Root, "out.csv"), "old")
	data := strings.Repeat("0123456789", 50000)
	if err := c.Upload(ctx, s.Root, "out.csv", strings.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	local, _, size, err := c.Download(ctx, filepath.Join(s.Root, "out.csv"), t.TempDir())
	if err != nil || size != int64(len(data)) || readFile(t, local) != data {
		t.Fatalf("round trip: size %d, err %v", size, err)
	}
}

func TestUploadRejectsPathsAsNames(t *testing.T) {
	s, _ := startSFTPD(t)
	c := dial(t, sftpdOptions(s))
	for _, name := range []string{"", ".", "..", "../x.csv", "a/b.csv"} {
		if err := c.Upload(ctxT(t), s.Root, name, strings.NewReader("x")); err == nil {
			t.Errorf("Upload(%q) succeeded", name)
		}
		if _, err := c.Move(ctxT(t), s.Root+"/x", s.Root, name); err == nil {
			t.Errorf("Move(%q) succeeded", name)
		}
	}
}

func TestKeepaliveNoticesSilentServer(t *testing.T) {
	s, dir := startSFTPD(t)
	p := newProxy(t, s.Addr)
	var logs logBuffer
	o := proxyOptions(t, s, dir, p)
	o.Keepalive = 100 * time.Millisecond
	o.OpTimeout = time.Hour // only the keepalive can notice
	o.Logger = logs.logger()
	c := dial(t, o)

	p.silence() // the current connection now goes nowhere; new ones work
	if _, err := c.Stat(ctxT(t), s.Root); err != nil {
		t.Fatalf("Stat after the server went silent: %v", err)
	}
	if c.Reconnects() < 1 {
		t.Fatal("no reconnect")
	}
	mustContain(t, logs.String(), "no keepalive reply within 100ms")
}

func TestOpTimeoutNoticesStalledRequest(t *testing.T) {
	s, dir := startSFTPD(t)
	p := newProxy(t, s.Addr)
	var logs logBuffer
	o := proxyOptions(t, s, dir, p)
	o.Keepalive = time.Hour // only the request deadline can notice
	o.OpTimeout = 200 * time.Millisecond
	o.Logger = logs.logger()
	c := dial(t, o)

	p.silence()
	// Non-seekable reader: Upload is not retried, so the failure shows.
	err := c.Upload(ctxT(t), s.Root, "x.csv", io.MultiReader(strings.NewReader("abc")))
	if !errors.Is(err, remote.ErrConnectionLost) {
		t.Fatalf("Upload to a stalled server: %v", err)
	}
	mustContain(t, err.Error(), "no reply from the server within 200ms")
	// Its temporary file was removed over a new connection.
	if n := names(t, s.Root); len(n) != 0 {
		t.Fatalf("root holds %v after the failed upload", n)
	}
	// The next operation gets a new connection.
	if _, err := c.Stat(ctxT(t), s.Root); err != nil {
		t.Fatalf("Stat after reconnect: %v", err)
	}
}

// proxyOptions connects through p, pinning the server's host key for the
// proxy's address.
func proxyOptions(t *testing.T, s *sftpd.Server, dir string, p *proxy) remote.Options {
	t.Helper()
	pub, err := os.ReadFile(filepath.Join(dir, "ssh_host_ed25519_key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	key, _, _, _, err := ssh.ParseAuthorizedKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	o := sftpdOptions(s)
	o.Address = p.addr
	o.KnownHosts = filepath.Join(t.TempDir(), "known_hosts")
	if err := sshkey.WriteKnownHosts(o.KnownHosts, p.addr, key); err != nil {
		t.Fatal(err)
	}
	return o
}

// proxy forwards TCP connections to a target. silence makes the current
// connections swallow all data in both directions while staying open, like
// a server that hangs or a network path that died without a reset.
type proxy struct {
	addr   string
	target string
	ln     net.Listener
	mu     sync.Mutex
	links  []*link
	wg     sync.WaitGroup
}

type link struct {
	a, b   net.Conn
	silent atomic.Bool
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: ln.Addr().String(), target: target, ln: ln}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, l := range p.links {
			l.a.Close()
			l.b.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		a, err := p.ln.Accept()
		if err != nil {
			return
		}
		b, err := net.Dial("tcp", p.target)
		if err != nil {
			a.Close()
			continue
		}
		l := &link{a: a, b: b}
		p.mu.Lock()
		p.links = append(p.links, l)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(l, a, b)
		go p.pipe(l, b, a)
	}
}

func (p *proxy) pipe(l *link, dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !l.silent.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

func (p *proxy) silence() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.links {
		l.silent.Store(true)
	}
}

// Operations running concurrently when the connection drops all succeed,
// and they share a single reconnect.
func TestConcurrentOperationsShareOneReconnect(t *testing.T) {
	s, _ := startSFTPD(t)
	c := dial(t, sftpdOptions(s))
	ctx := ctxT(t)
	const workers = 8
	var ok atomic.Int64
	stop := make(chan struct{})
	errs := make(chan error, workers)
	for range workers {
		go func() {
			for {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				if _, err := c.Stat(ctx, s.Root); err != nil {
					errs <- err
					return
				}
				ok.Add(1)
			}
		}()
	}
	eventually(t, "operations before the drop", func() bool { return ok.Load() >= workers })
	s.DropConnections()
	before := ok.Load()
	eventually(t, "operations after the drop", func() bool { return ok.Load() >= before+4*workers })
	close(stop)
	for range workers {
		if err := <-errs; err != nil {
			t.Fatalf("Stat during reconnect: %v", err)
		}
	}
	if n := c.Reconnects(); n != 1 {
		t.Fatalf("Reconnects = %d, want 1", n)
	}
}
