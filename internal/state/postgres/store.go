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
// Transactions (the round trips they cost: docs/benchmarks.md, issue 31):
//   - View is a REPEATABLE READ, read-only transaction: one snapshot.
//   - Update and UpdateUnfenced are READ COMMITTED transactions that hold
//     pg_advisory_xact_lock(Options.LockKey) from their first statement:
//     BEGIN, the lock, the lease check (fenced) and the origin ride with
//     it, in one round trip (conn.go). REPEATABLE READ would take its
//     snapshot before the lock is granted and miss the previous writer's
//     commit.
//   - Batch is group commit (batch.go), and optimistic: its reads take
//     no lock (values come from the database or the process's cache), and
//     it takes the lock only in the one pipelined batch that commits,
//     which first checks the lease and that every key, page and absent
//     bucket it read is unchanged, then writes, then commits (commit.go).
//     Every write transaction of the ledger, in any process, takes the
//     lock before it writes, so checks that pass under the lock make the
//     transaction's reads the database as it commits: a rule's
//     read-decide-write is race-free, as on bbolt's single writer. A
//     failed check commits nothing, and the transaction runs again,
//     locked. Workers no longer queue behind each other's round trips:
//     the lock is held for the server's time on a commit, not the
//     network's.
//   - An error from the database inside a transaction is sticky: later
//     reads answer absent, later writes fail, and the transaction returns
//     that error, whatever fn returned, and commits nothing.
package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/batchd/batchd/internal/state/kv"
)

// DefaultLockKey is the advisory lock key that serialises the ledger's
// write transactions. Advisory locks are per database, and a database
// holds one ledger.
const DefaultLockKey int64 = 0x62617463_68640002 // "batchd" 0002

// DefaultIdleInTxTimeout is how long the server lets a transaction of the
// Store sit idle between statements before it ends the session.
const DefaultIdleInTxTimeout = 10 * time.Second

// DefaultMaxConns is the pool's size unless Options or the DSN say
// otherwise. pgxpool's own default (the larger of 4 and the number of
// CPUs) is 4 on a small host, and batchd's readers wait for a connection
// rather than the database: reconcile's page processors, its status pass
// and the pass's read-ahead, submit's batches and the lease's renewal each
// hold one while they wait a network round trip on it. At 1 ms from the
// server, reconcile of 20,000 checks took 1.24-1.41x the paging floor
// with 4, and 1.18-1.42x with 16 (docs/benchmarks.md).
const DefaultMaxConns = 16

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
	// MaxConns caps the connection pool; zero means DefaultMaxConns. A
	// DSN that names pool_max_conns keeps its own cap either way: an
	// operator may have to fit a managed server's connection limit.
	MaxConns int32
	// BatchDelay is how long Batch waits for other calls to share its
	// commit; zero means DefaultBatchDelay.
	BatchDelay time.Duration
	// BatchSize caps the calls sharing one commit; zero means
	// DefaultBatchSize.
	BatchSize int
	// IdleInTxTimeout is the sessions' idle_in_transaction_session_timeout
	// (zero: DefaultIdleInTxTimeout; negative: none). An instance stopped
	// or cut off mid-transaction holds the write lock and the lease row;
	// the server ends its session after this long, so the others can
	// write and take over, and the stalled transaction commits nothing.
	// Keep it well under the lease TTL, and above any pause a rule makes
	// between two statements.
	IdleInTxTimeout time.Duration
	// Projection decodes the records of the typed tables (project.go,
	// docs/ops-sql.md); nil means the ledger's own (state.Projection), so
	// that no Store, a tool's or a test's included, writes keys without
	// their tables.
	Projection kv.Projection
}

// Store is a ledger in one PostgreSQL database. It is safe for concurrent
// use.
type Store struct {
	pool     *pgxpool.Pool
	name     string // the DSN's hosts and database (describe)
	database string
	server   atomic.Pointer[server] // the server last reached (server.go)
	// origin is the origin a write transaction last read (tx.Origin).
	origin  atomic.Pointer[kv.Origin]
	lockKey int64
	fencing atomic.Bool
	txSeq   atomic.Int64

	batches batcher
	// proj keeps the typed tables with the keys (project.go).
	proj *projector
	// cache holds values this process read or committed, for optimistic
	// transactions (cache.go).
	cache valueCache
	// buckets are the names of buckets this process has seen exist: the
	// catalogue, read once per process rather than once per transaction
	// (a round trip each, on a database a network away). batchd never
	// deletes a bucket; one whose creation a failover lost is refused by
	// kv_keys' foreign key at the first write, which forgets it.
	buckets sync.Map // string -> struct{}

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
	return openTo(ctx, dsn, opts, 0)
}

// openTo is Open with the schema migrated up to version to (zero: the
// latest), for tests of a ledger made by an older batchd.
func openTo(ctx context.Context, dsn string, opts Options, to int64) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The parser's error may quote the DSN, password and all.
		return nil, errors.New("open postgres ledger: the DSN does not parse (not shown: it may hold a password)")
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = cmp.Or(opts.MaxConns, DefaultMaxConns)
	}
	idle := opts.IdleInTxTimeout
	if idle == 0 {
		idle = DefaultIdleInTxTimeout
	}
	if idle > 0 {
		cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = fmt.Sprint(max(idle.Milliseconds(), 1))
	}
	s := &Store{name: describe(cfg.ConnConfig.Config), database: cfg.ConnConfig.Database, lockKey: opts.LockKey}
	if s.lockKey == 0 {
		s.lockKey = DefaultLockKey
	}
	s.fencing.Store(opts.Fencing)
	s.batches.init(s, opts)
	if opts.Projection == nil {
		opts.Projection = ledgerProjection()
	}
	s.proj = newProjector(opts.Projection)
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("open postgres ledger %s: %w", s.name, err)
	}
	if err := s.pool.Ping(ctx); err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("open postgres ledger %s: %w", s.name, err)
	}
	if err := migrate(ctx, s.pool, s.proj, to); err != nil {
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

// Name names the store for messages: the server its last transaction
// reached (host, port and database), or before any, every host of the DSN.
func (s *Store) Name() string {
	if cur := s.server.Load(); cur != nil {
		return cur.name
	}
	return s.name
}

// Close closes the pool. It does not resign a lease (call Resign first):
// a crashed instance cannot either, and the lease then simply expires.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Fencing turns fencing on or off. When on, every Update and Batch
// checks, with the lease row locked FOR SHARE in the same transaction and
// after the write lock, that the lease's epoch is the one this Store took
// with TryLead; otherwise it fails with kv.ErrFenced and writes nothing.
// Update checks with its first statement; Batch in the pipelined batch
// that writes and commits, so no round trip separates the check from the
// commit (commit.go). The row lock means no other instance can take the
// lease between the check and the commit: a takeover waits for a fenced
// write in flight, and for a stalled one at most
// Options.IdleInTxTimeout, after which the server ends the stalled
// session and its transaction commits nothing.
// UpdateUnfenced never checks.
func (s *Store) Fencing(on bool) { s.fencing.Store(on) }

// View runs fn in a REPEATABLE READ, read-only transaction.
func (s *Store) View(fn func(kv.Tx) error) error {
	return s.run(viewing, false, asTx(fn))
}

func asTx(fn func(kv.Tx) error) func(*tx) error {
	return func(t *tx) error { return fn(t) }
}

// Update runs fn in a serialised write transaction that holds the write
// lock from its first statement (see the package doc), fenced when
// fencing is on.
func (s *Store) Update(fn func(kv.Tx) error) error {
	return s.run(locked, s.fencing.Load(), asTx(fn))
}

// Batch is Update through group commit, fenced like Update: fn may share
// one transaction with other callers' and may run more than once. It runs
// optimistically: the write lock is taken in the batch that commits
// (commit.go).
func (s *Store) Batch(fn func(kv.Tx) error) error { return s.batches.do(fn) }

// UpdateUnfenced is Update without the lease check.
func (s *Store) UpdateUnfenced(fn func(kv.Tx) error) error {
	return s.run(locked, false, asTx(fn))
}

// run runs fn in a transaction of mode and commits a write one when fn
// and every statement succeeded. An optimistic transaction that a
// conflict stopped runs again, locked, once: a locked one meets none.
func (s *Store) run(mode txMode, fenced bool, fn func(*tx) error) error {
	err := s.attempt(mode, fenced, fn)
	if errors.Is(err, errConflict) {
		s.cache.clear()
		err = s.attempt(locked, fenced, fn)
	}
	return err
}

// attempt runs fn in one transaction of mode.
func (s *Store) attempt(mode txMode, fenced bool, fn func(*tx) error) error {
	ctx := context.Background()
	s.mu.Lock()
	held := s.epoch
	s.mu.Unlock()
	if fenced && held == 0 {
		return fmt.Errorf("%s: %w (this instance holds no lease)", s.Name(), kv.ErrFenced)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("%s: begin: %w", s.name, err)
	}
	t := &tx{s: s, conn: conn, pg: conn.Conn(), ctx: ctx, mode: mode, writable: mode != viewing,
		fenced: fenced, held: held, id: int(s.txSeq.Add(1)), buckets: map[string]*bucket{}, failedCall: -1}
	defer t.end()
	s.noteServer(t.pg)
	ferr := fn(t)
	if t.err != nil {
		return t.err
	}
	if ferr != nil || !t.writable {
		return ferr
	}
	if err := t.commit(); err != nil {
		return err
	}
	s.cache.commit(&t.pending)
	for _, f := range t.onCommit {
		f()
	}
	return nil
}
