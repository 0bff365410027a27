package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// readyTimeout bounds how long a fresh server may take to accept a
// connection.
const readyTimeout = 30 * time.Second

// errMissing says what to do when the machine has no PostgreSQL.
var errMissing = errors.New("PostgreSQL server binaries (initdb, postgres) not found: " +
	"install Debian's postgresql package, as .ci/run does (apt-get install postgresql)")

// Server is one private PostgreSQL server: its data directory and socket
// live in one temporary directory, removed by Close.
type Server struct {
	dir  string // temporary directory holding data/ and the socket
	port int    // names the socket file (.s.PGSQL.<port>); no TCP listener
	// extra are more -c settings, after the defaults so that they win (a
	// replicating server's, replica.go).
	extra []string
	cmd   *exec.Cmd
	out   *syncBuffer
	done  chan struct{} // closed when the postmaster exited
	once  sync.Once
	err   error
}

// prepare finds the binaries and the server's user and makes the
// private directory of a server with settings extra, not yet started.
func prepare(extra []string) (s *Server, bin string, cred *syscall.Credential, err error) {
	if bin, err = BinDir(); err != nil {
		return nil, "", nil, err
	}
	cred, uid, gid, err := serverUser()
	if err != nil {
		return nil, "", nil, err
	}
	dir, err := makeDir(uid, gid)
	if err != nil {
		return nil, "", nil, err
	}
	return &Server{dir: dir, port: 5432, extra: extra, out: &syncBuffer{}, done: make(chan struct{})}, bin, cred, nil
}

// NewServer initialises and starts a server. Close stops it.
func NewServer() (*Server, error) { return newServer(nil) }

// newServer is NewServer with more settings (-c name=value).
func newServer(extra []string) (*Server, error) { return startServer(extra, 0) }

// startServer is newServer on port (0: the socket's usual 5432, with no
// TCP listener to collide on).
func startServer(extra []string, port int) (*Server, error) {
	s, bin, cred, err := prepare(extra)
	if err != nil {
		return nil, err
	}
	if port != 0 {
		s.port = port
	}
	if err := s.initdb(bin, cred); err != nil {
		os.RemoveAll(s.dir)
		return nil, err
	}
	if err := s.start(bin, cred); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// DSN is the URL of database db on s, as superuser "postgres" over the
// unix socket.
func (s *Server) DSN(db string) string {
	q := url.Values{"host": {s.dir}, "port": {strconv.Itoa(s.port)}, "sslmode": {"disable"}}
	return "postgres://postgres@/" + url.PathEscape(db) + "?" + q.Encode()
}

// Dir is the server's temporary directory (its socket directory).
func (s *Server) Dir() string { return s.dir }

// BinDir finds PostgreSQL's server binaries: `pg_config --bindir` when it
// holds initdb, else the newest /usr/lib/postgresql/*/bin (Debian puts
// pg_config's client-only view in /usr/bin).
func BinDir() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		d := strings.TrimSpace(string(out))
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errMissing
}

// Tool is the path of one of the server's client tools (pg_dump), from
// the same installation as the server the tests start, so that a test
// needing it fails, never skips, where PostgreSQL is missing.
func Tool(t testing.TB, name string) string {
	t.Helper()
	dir, err := BinDir()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	p := filepath.Join(dir, name)
	if !isExec(p) {
		t.Fatalf("pgtest: %s is not in %s: install the postgresql package (.ci/run does)", name, dir)
	}
	return p
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// serverUser picks who runs the server. As root that is Debian's
// "postgres" user (the postgresql package creates it), else "nobody";
// otherwise the current user, with no credential change.
func serverUser() (*syscall.Credential, int, int, error) {
	if os.Geteuid() != 0 {
		return nil, os.Geteuid(), os.Getegid(), nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.Atoi(u.Uid)
		gid, err2 := strconv.Atoi(u.Gid)
		if err1 != nil || err2 != nil {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, uid, gid, nil
	}
	return nil, 0, 0, errors.New("running as root, and neither user postgres nor nobody exists to run the server")
}

// makeDir creates the server's directory, owned by uid:gid, under a parent
// that user can traverse: the system temporary directory when it can,
// else /tmp. The path stays short, as a unix socket path must.
func makeDir(uid, gid int) (string, error) {
	parent := os.TempDir()
	// A socket path holds at most 107 bytes: <dir>/.s.PGSQL.5432.
	if len(parent) > 60 || uid != os.Geteuid() && !traversable(parent) {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, "pgtest-")
	if err != nil {
		return "", fmt.Errorf("create server directory: %w", err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("chown server directory %s: %w", dir, err)
	}
	return dir, nil
}

// traversable reports whether every directory from / to dir lets others
// through (o+x), so a server running as another user reaches its files.
func traversable(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == "/" || d == "." {
			return true
		}
	}
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }

// initdb creates the cluster: trust authentication (the socket is in a
// private directory), C locale so text sorts bytewise, no fsync.
func (s *Server) initdb(bin string, cred *syscall.Credential) error {
	cmd := exec.Command(filepath.Join(bin, "initdb"), "-D", s.dataDir(), "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("initdb in %s: %v\n%s", s.dir, err, out.String())
	}
	return nil
}

// start runs the postmaster in the foreground of a child process (so Close
// can signal and reap it) and waits until it accepts connections. The
// child gets SIGQUIT (immediate shutdown) if the test binary dies first.
func (s *Server) start(bin string, cred *syscall.Credential) error {
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", s.dataDir(),
		"-k", s.dir, "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "shared_buffers=32MB",
		"-c", "logging_collector=off", "-c", "log_min_messages=warning")
	for _, kv := range s.extra {
		s.cmd.Args = append(s.cmd.Args, "-c", kv)
	}
	s.cmd.Dir = s.dir
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGQUIT}
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	go func() {
		s.cmd.Wait()
		close(s.done)
	}()
	return s.waitReady()
}

func (s *Server) waitReady() error {
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := pgx.Connect(ctx, s.DSN("postgres"))
		cancel()
		if err == nil {
			c.Close(context.Background())
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres in %s not ready within %s: %v\n%s", s.dir, readyTimeout, err, s.out.String())
		}
		select {
		case <-s.done:
			return fmt.Errorf("postgres exited before it was ready:\n%s", s.out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Close stops the server (SIGQUIT: immediate shutdown, which also ends
// every backend), waits for it, and removes its directory.
func (s *Server) Close() error {
	s.once.Do(func() { s.err = s.close() })
	return s.err
}

func (s *Server) close() error {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
			// The postmaster's process group holds its backends.
			syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
		}
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("remove %s: %w", s.dir, err)
	}
	return nil
}

// syncBuffer collects the server's output for error messages.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
