package ingest

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/sftpd"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/testsshd"
)

// server is an SFTP server whose files the test reaches directly on disk.
type server struct {
	root  string
	opts  remote.Options
	sftpd *sftpd.Server // the in-process server, whose hooks refuse what a partner's may; nil for OpenSSH
}

// servers returns the two kinds every scenario runs against: the real
// OpenSSH sshd (what production talks to) and the in-process server (what
// the demo uses).
func servers() map[string]func(t *testing.T) server {
	return map[string]func(t *testing.T) server{
		"openssh": func(t *testing.T) server {
			s := testsshd.Start(t)
			return server{s.Root, remote.Options{Address: s.Addr, User: s.User, IdentityFile: s.IdentityFile, KnownHosts: s.KnownHosts}, nil}
		},
		"inprocess": func(t *testing.T) server {
			s, err := sftpd.Start(context.Background(), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return server{s.Root, remote.Options{Address: s.Addr, User: s.User, IdentityFile: s.IdentityFile, KnownHosts: s.KnownHostsFile}, s}
		},
	}
}

// clock is a settable clock for stability tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// rig is one server, one state directory, and a way to restart the job as
// a new process would: reopen the ledger and build a fresh Job.
type rig struct {
	t        *testing.T
	srv      server
	backend  string // the ledger's (ledgertest)
	dsn      string // the PostgreSQL ledger's database
	stateDir string
	db       *state.DB
	rem      *remote.Client
	clk      *clock
	opts     Options
}

// newRig is a rig on a bbolt ledger; see newRigOn.
func newRig(t *testing.T, srv server, tweak func(*Options)) *rig {
	t.Helper()
	return newRigOn(t, ledgertest.Bbolt, srv, tweak)
}

// newRigOn is a rig whose ledger is on backend (a fresh PostgreSQL
// database for that one), its Options tweaked by tweak.
func newRigOn(t *testing.T, backend string, srv server, tweak func(*Options)) *rig {
	t.Helper()
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		if err := os.MkdirAll(filepath.Join(srv.root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := &rig{t: t, srv: srv, backend: backend, stateDir: t.TempDir(), clk: &clock{t: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)}}
	if backend == ledgertest.Postgres {
		r.dsn = pgtest.NewDatabase(t)
	}
	r.opts = Options{
		Inbox: filepath.Join(srv.root, "inbox"), Archive: filepath.Join(srv.root, "archive"),
		Failed: filepath.Join(srv.root, "failed"), Outbox: filepath.Join(srv.root, "outbox"),
		StableFor: time.Second, MaxWait: time.Nanosecond, TestMode: true,
		SpoolDir: filepath.Join(r.stateDir, "spool"), ReportsDir: filepath.Join(r.stateDir, "reports"),
		Now: r.clk.now,
	}
	if tweak != nil {
		tweak(&r.opts)
	}
	r.open()
	rem, err := remote.Dial(context.Background(), srv.opts)
	if err != nil {
		t.Fatal(err)
	}
	r.rem = rem
	t.Cleanup(func() { rem.Close(); r.db.Close() })
	return r
}

func (r *rig) open() {
	if r.backend == ledgertest.Postgres {
		r.db = ledgertest.OpenPostgres(r.t, r.dsn, state.Options{})
		return
	}
	db, err := state.Open(r.stateDir, state.Options{})
	if err != nil {
		r.t.Fatal(err)
	}
	r.db = db
}

// restart closes and reopens the ledger, as after a crash. A crashed
// process's lease on a shared ledger would run out on its own; the rig
// gives it up instead, so the new one leads at once.
func (r *rig) restart() {
	if r.backend == ledgertest.Postgres {
		if err := r.db.Resign(context.Background()); err != nil {
			r.t.Fatal(err)
		}
	}
	r.db.Close()
	r.open()
}

// TestMain stops the shared PostgreSQL server (pgtest) the rigs' ledgers
// on that backend live in.
func TestMain(m *testing.M) { pgtest.Main(m) }

// drop writes a file into the inbox.
func (r *rig) drop(name, content string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.opts.Inbox, name), []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) dropFile(name, src string) {
	r.t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		r.t.Fatal(err)
	}
	r.drop(name, string(b))
}

// run runs one cycle with a fresh Job after the files have settled.
func (r *rig) run(rem Remote) ([]Outcome, error) {
	j := New(r.db, r.opts)
	if _, err := j.Run(context.Background(), rem); err != nil { // first sight of each file
		return nil, err
	}
	r.clk.add(2 * time.Second)
	return j.Run(context.Background(), rem)
}

// files lists a remote directory tree relative to the server root.
func (r *rig) files(dir string) []string {
	var out []string
	base := filepath.Join(r.srv.root, dir)
	filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(base, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func (r *rig) read(rel string) string {
	b, err := os.ReadFile(filepath.Join(r.srv.root, rel))
	if err != nil {
		r.t.Fatal(err)
	}
	return string(b)
}

func (r *rig) batches() []payment.Batch {
	bs, err := r.db.Batches()
	if err != nil {
		r.t.Fatal(err)
	}
	return bs
}

func (r *rig) pendingRows() int {
	n := 0
	r.db.OpenRows(func(*payment.Row) (bool, error) { n++; return true, nil })
	return n
}

func mustContain(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Fatalf("%q does not contain %q", s, sub)
		}
	}
}
