// Package postgres stores batchd's ledger in PostgreSQL: an implementation
// of kv.Store on jackc/pgx/v5, so the ledger's rules (internal/state) run
// unchanged over a replicated database, and a leader lease with fencing so
// a standby instance can take over without recording anything the old
// leader decided after it lost the lease.
//
// Layout: kv's flat buckets are rows of kv_buckets (name, sequence); their
// keys are rows of kv_keys (bucket, k, v), bytea, which sorts bytewise as
// kv requires. The schema is embedded SQL applied by goose at Open.
//
// Transactions:
//   - View is a REPEATABLE READ, read-only transaction: one snapshot.
//   - Update, Batch and UpdateUnfenced are READ COMMITTED transactions
//     that first take pg_advisory_xact_lock(Options.LockKey). Every write
//     transaction of the ledger, in any process, takes that lock, so they
//     run one at a time and each sees every earlier commit: a rule's
//     read-decide-write is race-free, as on bbolt's single writer.
//     (REPEATABLE READ would take its snapshot before the lock is granted
//     and miss the previous writer's commit.)
//   - Batch is Update: no group commit yet.
//   - An error from the database inside a transaction is sticky: later
//     reads answer absent, later writes fail, and the transaction returns
//     that error, whatever fn returned, and commits nothing.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/batchd/batchd/internal/state/kv"
)

// DefaultLockKey is the advisory lock key that serialises the ledger's
// write transactions. Advisory locks are per database, and a database
// holds one ledger.
const DefaultLockKey int64 = 0x62617463_68640002 // "batchd" 0002

// Options tune a Store. The zero value is ready to use.
type Options struct {
	// LockKey is the pg_advisory_xact_lock key of write transactions;
	// zero means DefaultLockKey. Every instance on one ledger must use the
	// same key.
	LockKey int64
	// Fencing starts the Store with fencing on (see Store.Fencing). Off by
	// default: a lone instance, or a tool such as migrate-state, holds no
	// lease. A daemon that elects a leader turns it on before its first
	// write.
	Fencing bool
	// MaxConns caps the connection pool; zero keeps pgxpool's default
	// (the larger of 4 and the number of CPUs).
	MaxConns int32
}

// Store is a ledger in one PostgreSQL database. It is safe for concurrent
// use.
type Store struct {
	pool    *pgxpool.Pool
	name    string
	lockKey int64
	fencing atomic.Bool
	txSeq   atomic.Int64

	mu     sync.Mutex // guards holder and epoch, the lease this Store holds
	holder string
	epoch  uint64 // 0: holds no lease
}

var _ kv.Store = (*Store)(nil)

// Open connects to the database named by dsn, applies the schema's
// migrations (under a session advisory lock, so instances starting at once
// do not race) and returns the Store. ctx bounds only the opening. Errors
// name the database by host, port and name: never the DSN, which may hold
// a password.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The parser's error may quote the DSN, password and all.
		return nil, errors.New("open postgres ledger: the DSN does not parse (not shown: it may hold a password)")
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	s := &Store{name: describe(cfg.ConnConfig.Config), lockKey: opts.LockKey}
	if s.lockKey == 0 {
		s.lockKey = DefaultLockKey
	}
	s.fencing.Store(opts.Fencing)
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("open postgres ledger %s: %w", s.name, err)
	}
	if err := s.pool.Ping(ctx); err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("open postgres ledger %s: %w", s.name, err)
	}
	if err := migrate(ctx, s.pool); err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("open postgres ledger %s: %w", s.name, err)
	}
	return s, nil
}

// RedactDSN names the database a DSN points at, without user or password:
// "postgres host:port/dbname".
func RedactDSN(dsn string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return "postgres (unparseable DSN)"
	}
	return describe(*cfg)
}

func describe(c pgconn.Config) string {
	return fmt.Sprintf("postgres %s:%d/%s", c.Host, c.Port, c.Database)
}

// Name names the store for messages: host, port and database.
func (s *Store) Name() string { return s.name }

// Close closes the pool. It does not resign a lease (call Resign first):
// a crashed instance cannot either, and the lease then simply expires.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Fencing turns fencing on or off. When on, Update and Batch first check,
// with the lease row locked FOR SHARE in the same transaction, that the
// lease's epoch is the one this Store took with TryLead; otherwise they
// fail with kv.ErrFenced and write nothing. The row lock means no other
// instance can take the lease between the check and the commit.
// UpdateUnfenced never checks.
func (s *Store) Fencing(on bool) { s.fencing.Store(on) }

// View runs fn in a REPEATABLE READ, read-only transaction.
func (s *Store) View(fn func(kv.Tx) error) error {
	return s.run(pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, false, fn)
}

// Update runs fn in a serialised write transaction (see the package doc),
// fenced when fencing is on.
func (s *Store) Update(fn func(kv.Tx) error) error {
	return s.run(pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, s.fencing.Load(), fn)
}

// Batch is Update: each call commits on its own (no group commit yet),
// which kv's Batch contract allows.
func (s *Store) Batch(fn func(kv.Tx) error) error { return s.Update(fn) }

// UpdateUnfenced is Update without the lease check.
func (s *Store) UpdateUnfenced(fn func(kv.Tx) error) error {
	return s.run(pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, false, fn)
}

// run begins a transaction, prepares a write one (lock, fence), runs fn
// and commits a write one when fn and every statement succeeded.
func (s *Store) run(opts pgx.TxOptions, fenced bool, fn func(kv.Tx) error) error {
	ctx := context.Background()
	pg, err := s.pool.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("%s: begin: %w", s.name, err)
	}
	defer pg.Rollback(context.Background()) // no-op once committed
	t := &tx{s: s, pg: pg, ctx: ctx, writable: opts.AccessMode != pgx.ReadOnly,
		id: int(s.txSeq.Add(1)), buckets: map[string]*bucket{}}
	if t.writable {
		if err := s.prepareWrite(ctx, pg, fenced); err != nil {
			return err
		}
	}
	ferr := fn(t)
	if t.err != nil {
		return t.err
	}
	if ferr != nil || !t.writable {
		return ferr
	}
	if err := pg.Commit(ctx); err != nil {
		return fmt.Errorf("%s: commit: %w", s.name, err)
	}
	for _, f := range t.onCommit {
		f()
	}
	return nil
}

// prepareWrite takes the ledger's write lock and, when fenced, checks the
// lease epoch with the lease row locked FOR SHARE until commit.
func (s *Store) prepareWrite(ctx context.Context, pg pgx.Tx, fenced bool) error {
	if _, err := pg.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", s.lockKey); err != nil {
		return fmt.Errorf("%s: take the write lock: %w", s.name, err)
	}
	if !fenced {
		return nil
	}
	var epoch int64
	if err := pg.QueryRow(ctx, "SELECT epoch FROM leader WHERE id = 1 FOR SHARE").Scan(&epoch); err != nil {
		return fmt.Errorf("%s: read the lease: %w", s.name, err)
	}
	s.mu.Lock()
	held := s.epoch
	s.mu.Unlock()
	if held == 0 || uint64(epoch) != held {
		return fmt.Errorf("%s: %w (lease epoch %d, this instance holds %d)", s.name, kv.ErrFenced, epoch, held)
	}
	return nil
}
