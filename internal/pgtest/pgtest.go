// Package pgtest starts private PostgreSQL servers for tests, as
// internal/testsshd starts a private sshd: initdb in a temporary directory,
// the server listening only on a unix socket in that directory, run as a
// non-root user when the tests run as root (initdb and postgres refuse
// root), stopped at cleanup so no process outlives the test binary.
//
// Three ways in:
//
//   - Start(t) runs one server for one test: simple, about a second.
//   - NewDatabase(t) hands each test a fresh database on one server shared
//     by the whole test binary, which a suite needs for speed; the package's
//     TestMain must call Main(m), which stops the server after the tests.
//   - StartCluster(t, opts) runs a primary and a streaming standby, for
//     failover tests: kill the primary, promote the standby, follow it
//     with a multi-host DSN, and with an asynchronous standby lose the
//     last writes on purpose (replica.go). A few seconds.
//
// A machine without PostgreSQL fails the test (it never skips): .ci/run
// installs Debian's postgresql package.
package pgtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Start runs a private server for t and returns the DSN of its "postgres"
// database (superuser "postgres", no password). The server stops when t
// ends.
func Start(t testing.TB) string {
	t.Helper()
	s, err := NewServer()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return s.DSN("postgres")
}

var shared struct {
	mu      sync.Mutex
	inMain  bool
	server  *Server
	err     error
	started bool
}

// Main runs the tests of a package that uses NewDatabase and then stops
// the shared server. Call it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	s := shared.server
	shared.server = nil
	shared.mu.Unlock()
	if s != nil {
		if err := s.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// NewDatabase creates a fresh, empty database for t on the test binary's
// shared server (started on first use) and returns its DSN. The database
// is dropped when t ends. It needs Main in the package's TestMain, so the
// server is stopped once the tests are done.
func NewDatabase(t testing.TB) string {
	t.Helper()
	s := sharedServer(t)
	return s.NewDatabase(t)
}

func sharedServer(t testing.TB) *Server {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.inMain {
		t.Fatal("pgtest.NewDatabase needs pgtest.Main(m) in the package's TestMain, which stops the shared server")
	}
	if !shared.started {
		shared.started = true
		shared.server, shared.err = NewServer()
	}
	if shared.err != nil {
		t.Fatalf("pgtest: %v", shared.err)
	}
	return shared.server
}

var dbSeq atomic.Int64

// NewDatabase creates a fresh, empty database on s for t, dropped when t
// ends, and returns its DSN.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// WITH (FORCE) ends sessions a test left open.
		if err := s.exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return s.DSN(name)
}

func (s *Server) exec(ctx context.Context, sql string) error {
	c, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, sql)
	return err
}
