package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A Cluster is a primary and a streaming standby made from it, the way an
// HA deployment runs PostgreSQL, so that tests can fail the primary over
// as a failover manager would: kill it, promote the standby, and follow
// it through a multi-host DSN. With an asynchronous standby the test can
// also make the promotion lose the last writes (HoldBack), which is what
// a ledger that "went back in time" looks like (issue 27).
type Cluster struct {
	Primary *Server
	Standby *Server
	sync    bool
}

// ClusterOptions says how the cluster replicates.
type ClusterOptions struct {
	// Sync makes the standby synchronous: a commit on the primary returns
	// only once the standby has the WAL, so a promotion loses no commit.
	// Without it the standby lags as it may, and the primary keeps
	// synchronous_commit=off like NewServer's.
	Sync bool
	// Databases are created on the primary before the standby is made,
	// so both have them. (One created later replicates too.)
	Databases []string
}

// standbyName is the standby's application_name, which the primary's
// synchronous_standby_names and pg_stat_replication name it by.
const standbyName = "standby"

// replicationTimeout bounds each wait on replication: the base backup,
// the standby streaming, holding it back, a promotion.
const replicationTimeout = 60 * time.Second

// StartCluster runs a cluster for t, stopped when t ends.
func StartCluster(t testing.TB, opts ClusterOptions) *Cluster {
	t.Helper()
	c, err := NewCluster(opts)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return c
}

// NewCluster starts a primary, creates opts.Databases on it, makes a
// standby from a base backup (pg_basebackup -R, which also writes the
// standby's primary_conninfo) and waits until the standby streams. With
// opts.Sync it then makes the standby synchronous: only then, because a
// synchronous primary without its standby would hang the CREATE DATABASE
// and the base backup's checkpoint. Close stops both.
func NewCluster(opts ClusterOptions) (*Cluster, error) {
	settings := []string{"wal_level=replica", "max_wal_senders=4", "hot_standby=on",
		// The walreceiver reports often, so the primary sees a stopped
		// standby quickly and a synchronous commit waits little.
		"wal_receiver_status_interval=1s"}
	primarySettings := settings
	if opts.Sync {
		primarySettings = append(settings[:len(settings):len(settings)], "synchronous_commit=on")
	}
	p, err := newServer(primarySettings)
	if err != nil {
		return nil, fmt.Errorf("primary: %w", err)
	}
	c := &Cluster{Primary: p, sync: opts.Sync}
	ctx, cancel := context.WithTimeout(context.Background(), replicationTimeout)
	defer cancel()
	for _, db := range opts.Databases {
		if err := p.exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
			c.Close()
			return nil, fmt.Errorf("create database %s on the primary %s: %w", db, p.dir, err)
		}
	}
	if c.Standby, err = newStandby(p, settings); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.waitStreaming(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if opts.Sync {
		if err := c.makeSync(ctx); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// newStandby copies primary into a new server directory with
// pg_basebackup, as the server's user, and starts it as a hot standby.
func newStandby(primary *Server, settings []string) (*Server, error) {
	s, bin, cred, err := prepare(settings)
	if err != nil {
		return nil, err
	}
	dir := s.dir
	conninfo := fmt.Sprintf("host=%s port=%d user=postgres application_name=%s", primary.dir, primary.port, standbyName)
	// -c fast: a spread checkpoint would take minutes; -R: standby.signal
	// and primary_conninfo; -X stream (the default) brings the WAL the
	// copy needs.
	cmd := exec.Command(filepath.Join(bin, "pg_basebackup"), "-D", s.dataDir(), "-d", conninfo,
		"-R", "-X", "stream", "-c", "fast", "--no-sync")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("standby in %s: start pg_basebackup: %w", dir, err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(replicationTimeout):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = fmt.Errorf("not done within %s", replicationTimeout)
		<-done
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("standby in %s: pg_basebackup from the primary %s: %v\n%s", dir, primary.dir, err, out.String())
	}
	if err := s.start(bin, cred); err != nil {
		s.Close()
		return nil, fmt.Errorf("standby: %w", err)
	}
	return s, nil
}

// waitStreaming waits until the primary lists the standby as streaming.
func (c *Cluster) waitStreaming(ctx context.Context) error {
	return c.wait(ctx, "the standby "+c.Standby.dir+" streaming from the primary "+c.Primary.dir, func(ctx context.Context) (bool, error) {
		var n int
		err := c.Primary.queryRow(ctx, "SELECT count(*) FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'",
			[]any{standbyName}, &n)
		return n == 1, err
	})
}

// makeSync names the standby in the primary's synchronous_standby_names
// and waits until the primary counts it as synchronous, after which every
// commit waits for the standby to have its WAL.
func (c *Cluster) makeSync(ctx context.Context) error {
	if err := c.Primary.exec(ctx, "ALTER SYSTEM SET synchronous_standby_names = '"+standbyName+"'"); err != nil {
		return fmt.Errorf("primary %s: set synchronous_standby_names: %w", c.Primary.dir, err)
	}
	if err := c.Primary.exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("primary %s: reload: %w", c.Primary.dir, err)
	}
	return c.wait(ctx, "the standby synchronous", func(ctx context.Context) (bool, error) {
		var n int
		err := c.Primary.queryRow(ctx, "SELECT count(*) FROM pg_stat_replication WHERE application_name = $1 AND sync_state = 'sync'",
			[]any{standbyName}, &n)
		return n == 1, err
	})
}

// DSN is a multi-host URL of database db on both servers, primary first,
// with target_session_attrs=read-write: pgx connects to whichever accepts
// writes, so a client follows a promotion without being told.
func (c *Cluster) DSN(db string) string {
	q := url.Values{
		"host":                 {c.Primary.dir + "," + c.Standby.dir},
		"port":                 {strconv.Itoa(c.Primary.port) + "," + strconv.Itoa(c.Standby.port)},
		"target_session_attrs": {"read-write"},
		"sslmode":              {"disable"},
	}
	return "postgres://postgres@/" + url.PathEscape(db) + "?" + q.Encode()
}

// HoldBack makes the standby stop receiving WAL, and returns once it has:
// what the primary commits from then on is not on the standby, and a
// promotion loses it. (Pausing replay would not do: a promotion replays
// all WAL received.) It empties primary_conninfo, which PostgreSQL 13 and
// later apply on reload by stopping the walreceiver. Never on a
// synchronous cluster: the primary's commits would wait for the standby
// for ever.
func (c *Cluster) HoldBack() error {
	if c.sync {
		return errors.New("hold back the standby of a synchronous primary: its commits would hang")
	}
	ctx, cancel := context.WithTimeout(context.Background(), replicationTimeout)
	defer cancel()
	s := c.Standby
	if err := s.exec(ctx, "ALTER SYSTEM SET primary_conninfo = ''"); err != nil {
		return fmt.Errorf("standby %s: empty primary_conninfo: %w", s.dir, err)
	}
	if err := s.exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("standby %s: reload: %w", s.dir, err)
	}
	return c.wait(ctx, "the standby "+s.dir+" no longer receiving WAL", func(ctx context.Context) (bool, error) {
		var receivers, senders int
		if err := s.queryRow(ctx, "SELECT count(*) FROM pg_stat_wal_receiver", nil, &receivers); err != nil {
			return false, err
		}
		err := c.Primary.queryRow(ctx, "SELECT count(*) FROM pg_stat_replication WHERE application_name = $1", []any{standbyName}, &senders)
		return receivers == 0 && senders == 0, err
	})
}

// KillPrimary SIGKILLs every process of the primary, as a crashed host
// would lose them, and returns once all are gone. The postmaster's
// children each lead their own session (PostgreSQL calls setsid in every
// child), so its process group is not enough: the postmaster is stopped
// first, so it forks no more, then its children and it are killed.
func (c *Cluster) KillPrimary() error {
	p := c.Primary
	if p.cmd == nil || p.cmd.Process == nil {
		return fmt.Errorf("kill the primary %s: not running", p.dir)
	}
	pid := p.cmd.Process.Pid
	select {
	case <-p.done:
		return fmt.Errorf("kill the primary %s: it had already exited:\n%s", p.dir, p.out.String())
	default:
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("kill the primary %s: stop postmaster %d: %w", p.dir, pid, err)
	}
	deadline := time.Now().Add(replicationTimeout)
	for procState(pid) != 'T' {
		if time.Now().After(deadline) {
			return fmt.Errorf("kill the primary %s: postmaster %d not stopped within %s", p.dir, pid, replicationTimeout)
		}
		time.Sleep(time.Millisecond)
	}
	kids := childrenOf(pid)
	for _, k := range kids {
		syscall.Kill(k, syscall.SIGKILL)
	}
	syscall.Kill(-pid, syscall.SIGKILL) // the postmaster and its group
	syscall.Kill(pid, syscall.SIGCONT)  // not needed for SIGKILL; harmless
	select {
	case <-p.done:
	case <-time.After(replicationTimeout):
		return fmt.Errorf("kill the primary %s: postmaster %d still there after %s", p.dir, pid, replicationTimeout)
	}
	for _, k := range kids {
		for st := procState(k); st != 0 && st != 'Z'; st = procState(k) {
			if time.Now().After(deadline) {
				return fmt.Errorf("kill the primary %s: process %d still there after %s", p.dir, k, replicationTimeout)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

// Promote makes the standby a primary (pg_promote) and returns once it
// accepts writes.
func (c *Cluster) Promote() error {
	ctx, cancel := context.WithTimeout(context.Background(), replicationTimeout)
	defer cancel()
	s := c.Standby
	var ok bool
	if err := s.queryRow(ctx, "SELECT pg_promote(true, 60)", nil, &ok); err != nil || !ok {
		return fmt.Errorf("promote the standby %s: %v (promoted: %v)\n%s", s.dir, err, ok, s.out.String())
	}
	return c.wait(ctx, "the standby "+s.dir+" out of recovery", func(ctx context.Context) (bool, error) {
		var rec bool
		err := s.queryRow(ctx, "SELECT pg_is_in_recovery()", nil, &rec)
		return !rec, err
	})
}

// Close stops both servers and removes their directories.
func (c *Cluster) Close() error {
	var errs []error
	if c.Standby != nil {
		errs = append(errs, c.Standby.Close())
	}
	errs = append(errs, c.Primary.Close())
	return errors.Join(errs...)
}

// wait polls cond every 20 ms until it holds or ctx ends; the last error
// of cond goes in the message.
func (c *Cluster) wait(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	var last error
	for {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ok, err := cond(qctx)
		cancel()
		if err == nil && ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %v)\nprimary:\n%s\nstandby:\n%s", what, ctx.Err(), last,
				c.Primary.out.String(), c.standbyOut())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (c *Cluster) standbyOut() string {
	if c.Standby == nil {
		return ""
	}
	return c.Standby.out.String()
}

// queryRow runs one query on s's "postgres" database and scans its row.
func (s *Server) queryRow(ctx context.Context, sql string, args []any, dest ...any) error {
	return s.queryRowIn(ctx, "postgres", sql, args, dest...)
}

// queryRowIn runs one query on s's database db and scans its row.
func (s *Server) queryRowIn(ctx context.Context, db, sql string, args []any, dest ...any) error {
	conn, err := pgx.Connect(ctx, s.DSN(db))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.QueryRow(ctx, sql, args...).Scan(dest...)
}

// procState is the state letter of process pid (R, S, T, Z, ...), or 0
// when there is no such process.
func procState(pid int) byte {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 || i+2 >= len(raw) {
		return 0
	}
	return raw[i+2]
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	want := strconv.Itoa(pid)
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(raw, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(raw[i+1:]))
		if len(f) > 1 && f[1] == want {
			out = append(out, child)
		}
	}
	return out
}
