// Package testsshd starts a real OpenSSH sshd on a loopback port for
// integration tests, so that batchd's SFTP code is proven against the server
// finance teams actually run rather than only against a Go imitation.
//
// Each Start gets its own host keys, user key, known_hosts, config and SFTP
// area in a temporary directory, and sshd is killed (with every session it
// forked) when the test ends. Tests fail, never skip, when sshd is missing:
// .ci/run installs Debian's openssh-server.
package testsshd

import (
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/batchd/batchd/internal/sftpd/sshkey"
)

// SSHDPath is where Debian's openssh-server installs the daemon. sshd must be
// started by absolute path because it re-executes itself per connection.
const SSHDPath = "/usr/sbin/sshd"

// Server is a running sshd. Its exported fields are what a test hands to
// the SFTP client; they do not change for the life of the Server, even
// across Restart.
type Server struct {
	Addr               string        // "127.0.0.1:PORT"
	User               string        // the current user: sshd can only log in as itself without root
	IdentityFile       string        // the client's private key (ed25519, OpenSSH format, 0600)
	KnownHosts         string        // pins HostKey for "[127.0.0.1]:PORT"
	Root               string        // the SFTP area, an absolute path; holds inbox, archive, failed and outbox
	HostKeyFingerprint string        // SHA256:... of HostKey, as ssh-keygen -l prints it
	HostKey            ssh.PublicKey // the server's ed25519 host key, pinned in KnownHosts
	// OtherHostKey is the server's ECDSA host key, deliberately not pinned:
	// like a stock server, sshd has several host keys, and Go clients prefer
	// ECDSA, so a client must ask for the pinned type to connect.
	OtherHostKey ssh.PublicKey

	dir    string  // keys, config, pid file
	extra  *string // version-dependent sshd_config lines, once probed
	signer ssh.Signer

	mu    sync.Mutex
	proc  *process   // the running sshd; nil while stopped
	procs []*process // every sshd started, for the log on failure
}

// Start runs a fresh sshd and returns once it completes an SFTP handshake
// with the generated user key. It fails the test (never skips) if sshd is
// missing or does not come up.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := os.Stat(SSHDPath); err != nil {
		t.Fatalf("openssh-server is not installed; .ci/run installs it (%v)", err)
	}
	s := newServer(t)
	t.Cleanup(func() {
		s.stop(t)
		if t.Failed() {
			t.Logf("sshd output:\n%s", s.output())
		}
	})
	const attempts = 5
	for i := 0; ; i++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("testsshd: %v", err)
		}
		err = s.startOn(t, port)
		if err == nil {
			return s
		}
		if !isPortClash(err) || i == attempts-1 {
			t.Fatalf("testsshd: start sshd: %v\nsshd output:\n%s", err, s.output())
		}
	}
}

// newServer prepares keys and directories; sshd is not started yet.
func newServer(t testing.TB) *Server {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatalf("testsshd: current user: %v", err)
	}
	base := t.TempDir()
	s := &Server{User: u.Username, dir: filepath.Join(base, "sshd"), Root: filepath.Join(base, "root")}
	// The layout batchd expects on a finance team's SFTP server.
	dirs := []string{s.dir, s.Path("inbox"), s.Path("archive"), s.Path("failed"), s.Path("outbox")}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatalf("testsshd: %v", err)
		}
	}
	if err := ensurePrivsepDir(); err != nil {
		t.Fatalf("testsshd: %v", err)
	}
	host, err := sshkey.Generate(filepath.Join(s.dir, "ssh_host_ed25519_key"), "testsshd host")
	if err != nil {
		t.Fatalf("testsshd: %v", err)
	}
	s.HostKey = host.PublicKey()
	other, err := sshkey.GenerateECDSA(filepath.Join(s.dir, "ssh_host_ecdsa_key"), "testsshd host")
	if err != nil {
		t.Fatalf("testsshd: %v", err)
	}
	s.OtherHostKey = other.PublicKey()
	s.HostKeyFingerprint = ssh.FingerprintSHA256(s.HostKey)
	s.IdentityFile = filepath.Join(s.dir, "id_ed25519")
	if s.signer, err = sshkey.Generate(s.IdentityFile, "testsshd client"); err != nil {
		t.Fatalf("testsshd: %v", err)
	}
	if err := sshkey.WriteAuthorizedKeys(filepath.Join(s.dir, "authorized_keys"), s.signer.PublicKey()); err != nil {
		t.Fatalf("testsshd: %v", err)
	}
	s.KnownHosts = filepath.Join(s.dir, "known_hosts")
	return s
}

// ensurePrivsepDir creates the privilege separation directory that sshd
// requires when it runs as root; a fresh container often lacks it because
// the package's init scripts never ran.
func ensurePrivsepDir() error {
	if os.Geteuid() != 0 {
		return nil
	}
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return fmt.Errorf("create privilege separation dir: %w", err)
	}
	return nil
}

// WrongHostKnownHosts writes a known_hosts file that pins a different,
// freshly generated ed25519 key for this server's address: what a client
// sees when the server's key changed or someone is in the middle.
func (s *Server) WrongHostKnownHosts(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	other, err := sshkey.Generate(filepath.Join(dir, "other_host_key"), "not the server")
	if err != nil {
		t.Fatalf("testsshd: %v", err)
	}
	path := filepath.Join(dir, "known_hosts")
	if err := sshkey.WriteKnownHosts(path, s.Addr, other.PublicKey()); err != nil {
		t.Fatalf("testsshd: %v", err)
	}
	return path
}

// Path joins slash-separated elements onto Root, giving the absolute remote
// path an SFTP client uses for the same file.
func (s *Server) Path(elem ...string) string {
	return filepath.Join(append([]string{s.Root}, elem...)...)
}

// config renders sshd_config for port. Options are spelled out so that a
// distribution's defaults (PAM, password logins) cannot change the test.
func (s *Server) config(port int, extra string) string {
	var b strings.Builder
	w := func(k, v string) { fmt.Fprintf(&b, "%s %s\n", k, v) }
	w("ListenAddress", "127.0.0.1:"+strconv.Itoa(port))
	w("AddressFamily", "inet")
	w("HostKey", filepath.Join(s.dir, "ssh_host_ecdsa_key"))
	w("HostKey", filepath.Join(s.dir, "ssh_host_ed25519_key"))
	w("PidFile", filepath.Join(s.dir, "sshd.pid"))
	w("AuthorizedKeysFile", filepath.Join(s.dir, "authorized_keys"))
	w("AllowUsers", s.User)
	w("PubkeyAuthentication", "yes")
	w("PasswordAuthentication", "no")
	w("KbdInteractiveAuthentication", "no")
	w("UsePAM", "no")
	w("StrictModes", "no")
	w("PermitRootLogin", "prohibit-password")
	w("Subsystem", "sftp internal-sftp")
	w("LogLevel", "VERBOSE")
	b.WriteString(extra)
	return b.String()
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
