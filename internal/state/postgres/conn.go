package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/batchd/batchd/internal/state/kv"
)

// A transaction's statements go over one pooled connection, each request
// a pipelined batch. Nothing is sent when a transaction starts: its
// opening statements (BEGIN, and for a write the origin, and for a locked
// one the write lock and the lease) ride with its first request, so that
// opening costs no round trip of its own.

// txMode is how a transaction is isolated from the others.
type txMode int

const (
	// viewing: a REPEATABLE READ, read-only snapshot (View).
	viewing txMode = iota
	// optimistic: a write transaction that reads without the write lock
	// and takes it in the batch that commits, where what it read is
	// checked first (commit.go; Batch).
	optimistic
	// locked: a write transaction that holds the write lock, and when
	// fenced the lease row, from its first statement to its commit
	// (Update, UpdateUnfenced, and a Batch after a conflict).
	locked
)

// originSQL reads which server and database the transaction runs on
// (kv.Origin; kv_origin, migrations 00003 and 00005).
const originSQL = "SELECT system, timeline, db FROM kv_origin()"

// lockSQL takes the ledger's write lock until the transaction ends;
// fenceSQL checks, with the lease row locked FOR SHARE until then, that
// the lease's epoch is the one this instance holds (migration 00003).
const (
	lockSQL  = "SELECT pg_advisory_xact_lock($1)"
	fenceSQL = "SELECT kv_fence($1)"
)

// SQLSTATEs raised by migration 00003's checks.
const (
	codeFenced   = "BD001"
	codeConflict = "BD002"
)

// errConflict is a key the optimistic transaction read that changed
// before its commit: the transaction committed nothing and runs again,
// locked (Store.run).
var errConflict = errors.New("a key the transaction read changed before it committed")

func (t *tx) queueOpening(b *pgx.Batch) {
	switch t.mode {
	case viewing:
		b.Queue("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
	case optimistic:
		b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
	case locked:
		b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
		b.Queue(lockSQL, t.s.lockKey)
		if t.fenced {
			b.Queue(fenceSQL, int64(t.held))
		}
		b.Queue(originSQL)
	}
}

// readOpening reads the opening statements' results, failing the
// transaction at the first error.
func (t *tx) readOpening(res pgx.BatchResults) error {
	if _, err := res.Exec(); err != nil {
		return t.failWith(fmt.Errorf("%s: begin: %w", t.s.Name(), err))
	}
	if t.mode != locked {
		return nil
	}
	if err := t.execChecks(res, t.fenced); err != nil {
		return err
	}
	return t.scanOrigin(res.QueryRow())
}

// scanOrigin reads the transaction's origin, and remembers it for the
// process's optimistic transactions (Origin).
func (t *tx) scanOrigin(row pgx.Row) error {
	var system, timeline, db int64
	if err := row.Scan(&system, &timeline, &db); err != nil {
		return t.failWith(fmt.Errorf("%s: read the database's origin: %w", t.s.Name(), err))
	}
	t.origin = kv.Origin{System: uint64(system), Timeline: uint64(timeline), Database: uint64(db)}
	t.originRead = true
	o := t.origin
	t.s.origin.Store(&o)
	return nil
}

// execChecks reads the results of the write lock and, when fenced, the
// lease check.
func (t *tx) execChecks(res pgx.BatchResults, fenced bool) error {
	if _, err := res.Exec(); err != nil {
		return t.failWith(fmt.Errorf("%s: take the write lock: %w", t.s.Name(), err))
	}
	if !fenced {
		return nil
	}
	if _, err := res.Exec(); err != nil {
		if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == codeFenced {
			return t.failWith(fmt.Errorf("%s: %w (lease epoch %s, this instance holds %d)", t.s.Name(), kv.ErrFenced, pe.Detail, t.held))
		}
		return t.failWith(fmt.Errorf("%s: read the lease: %w", t.s.Name(), err))
	}
	return nil
}

// send sends the statements queue adds in one round trip, after the
// transaction's opening statements when it has not begun. On an error it
// returns the transaction's sticky one, and no results.
func (t *tx) send(queue func(*pgx.Batch)) (pgx.BatchResults, error) {
	if t.err != nil {
		return nil, t.err
	}
	var b pgx.Batch
	opening := !t.begun
	if opening {
		t.queueOpening(&b)
	}
	queue(&b)
	res := t.pg.SendBatch(t.ctx, &b)
	if opening {
		t.begun = true // the end rolls back whatever happens next
		if err := t.readOpening(res); err != nil {
			res.Close()
			return nil, err
		}
	}
	return res, nil
}

// row runs one query and scans its one row into dest; it returns the
// query's error as is (pgx.ErrNoRows for none), or the sticky one.
func (t *tx) row(sql string, args []any, dest ...any) error {
	res, err := t.send(func(b *pgx.Batch) { b.Queue(sql, args...) })
	if err != nil {
		return err
	}
	err = res.QueryRow().Scan(dest...)
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	return err
}

// queryRows runs one query and collects its rows with fn.
func queryRows[T any](t *tx, sql string, args []any, fn pgx.RowToFunc[T]) ([]T, error) {
	res, err := t.send(func(b *pgx.Batch) { b.Queue(sql, args...) })
	if err != nil {
		return nil, err
	}
	rows, err := res.Query()
	var out []T
	if err == nil {
		out, err = pgx.CollectRows(rows, fn)
	}
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	return out, err
}

// exec runs one statement.
func (t *tx) exec(sql string, args ...any) (pgconn.CommandTag, error) {
	res, err := t.send(func(b *pgx.Batch) { b.Queue(sql, args...) })
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := res.Exec()
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// end rolls back a transaction that began and did not commit, and gives
// the connection back. A connection left inside a transaction (the
// rollback failed) is closed by the pool, not reused.
//
// A read-only transaction's rollback runs on a goroutine of its own: its
// answer decides nothing, and the caller has its reads, so it need not
// wait a round trip more (a reconcile page's look-ups, at a distance,
// docs/benchmarks.md). The connection goes back to the pool once the
// answer is in; the pool's Close waits for it.
func (t *tx) end() {
	switch {
	case !t.begun || t.committed:
		t.conn.Release()
	case t.mode == viewing:
		go t.rollback()
	default:
		t.rollback()
	}
}

// rollbackWait bounds a rollback's wait for its answer: a server that
// never answers (a network gone) leaves its connection closed by pgx and
// dropped by the pool, not a caller or the pool's Close waiting on it.
const rollbackWait = 30 * time.Second

func (t *tx) rollback() {
	ctx, cancel := context.WithTimeout(t.ctx, rollbackWait)
	defer cancel()
	_, _ = t.pg.Exec(ctx, "ROLLBACK")
	t.conn.Release()
}
