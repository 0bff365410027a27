package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state/kv"
)

// The lease tests expire a lease by moving expires_at into the past with
// SQL, as time passing would: no test waits on a clock.
const longTTL = time.Hour

func expire(t *testing.T, admin *pgx.Conn) {
	t.Helper()
	if _, err := admin.Exec(context.Background(), "UPDATE leader SET expires_at = now() - interval '1 second'"); err != nil {
		t.Fatal(err)
	}
}

func lead(t *testing.T, s *Store, holder string) LeaderInfo {
	t.Helper()
	info, err := s.TryLead(context.Background(), holder, longTTL)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func TestLeaseTakeoverOnlyAfterExpiry(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	a, b, admin := open(t, dsn), open(t, dsn), conn(t, dsn)
	ctx := context.Background()

	first := lead(t, a, "a")
	if !first.Self || first.Holder != "a" || first.Epoch != 1 {
		t.Fatalf("first TryLead = %+v, want a leading at epoch 1", first)
	}
	if got := lead(t, b, "b"); got.Self || got.Holder != "a" || got.Epoch != 1 {
		t.Fatalf("b's TryLead under a live lease = %+v, want a still leading", got)
	}
	renewed := lead(t, a, "a")
	if !renewed.Self || renewed.Epoch != 1 || renewed.Expires.Before(first.Expires) {
		t.Fatalf("renewal = %+v, want epoch 1 and a later expiry than %v", renewed, first.Expires)
	}
	// A restarted "a" (a new Store) cannot tell its old self is gone.
	if got := lead(t, open(t, dsn), "a"); got.Self {
		t.Fatalf("a new Store took a's live lease under the same name: %+v", got)
	}

	expire(t, admin)
	took := lead(t, b, "b")
	if !took.Self || took.Holder != "b" || took.Epoch != 2 {
		t.Fatalf("b's TryLead after expiry = %+v, want b leading at epoch 2", took)
	}
	if got := lead(t, a, "a"); got.Self || got.Holder != "b" {
		t.Fatalf("a's TryLead after b took over = %+v", got)
	}
	if got, err := a.Leader(ctx); err != nil || got.Self || got.Holder != "b" || got.Epoch != 2 {
		t.Errorf("a.Leader = %+v, %v", got, err)
	}
	if got, err := b.Leader(ctx); err != nil || !got.Self || got.Holder != "b" {
		t.Errorf("b.Leader = %+v, %v", got, err)
	}
	expire(t, admin)
	if got, err := b.Leader(ctx); err != nil || got.Self || got.Holder != "" || got.Epoch != 2 {
		t.Errorf("Leader of an expired lease = %+v, %v; want no holder, epoch 2", got, err)
	}
}

func TestLeaseEpochStrictlyIncreases(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	stores := []*Store{open(t, dsn), open(t, dsn)}
	admin := conn(t, dsn)
	var last uint64
	for i := 0; i < 6; i++ {
		s, holder := stores[i%2], []string{"a", "b"}[i%2]
		// The same holder retaking its own expired lease moves on too.
		for j := 0; j < 2; j++ {
			got := lead(t, s, holder)
			if !got.Self || got.Epoch <= last {
				t.Fatalf("takeover %d.%d = %+v after epoch %d", i, j, got, last)
			}
			last = got.Epoch
			expire(t, admin)
		}
	}
}

func TestResignHandsOverAtOnce(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	a, b := open(t, dsn), open(t, dsn)
	lead(t, a, "a")
	must(t, a.Resign(context.Background()))
	if got := lead(t, b, "b"); !got.Self || got.Epoch != 2 {
		t.Fatalf("TryLead after a resigned = %+v, want b at epoch 2", got)
	}
	// Resigning a lease no longer held changes nothing.
	must(t, a.Resign(context.Background()))
	if got := lead(t, b, "b"); !got.Self || got.Epoch != 2 {
		t.Fatalf("b after a's second resign = %+v", got)
	}
}

func putK(s *Store, update func(*Store, func(kv.Tx) error) error, v string) error {
	return update(s, func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("rows"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte(v))
	})
}

func readK(t *testing.T, s *Store) string {
	t.Helper()
	var v string
	must(t, s.View(func(tx kv.Tx) error {
		if b := tx.Bucket([]byte("rows")); b != nil {
			v = string(b.Get([]byte("k")))
		}
		return nil
	}))
	return v
}

func TestFencedWriteAfterTakeoverCommitsNothing(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	a, b, admin := open(t, dsn), open(t, dsn), conn(t, dsn)
	a.Fencing(true)
	b.Fencing(true)
	if err := putK(a, (*Store).Update, "a-before-leading"); !errors.Is(err, kv.ErrFenced) {
		t.Fatalf("fenced write without a lease: %v, want ErrFenced", err)
	}
	lead(t, a, "a")
	must(t, putK(a, (*Store).Update, "a1"))
	must(t, putK(a, (*Store).Batch, "a2"))

	expire(t, admin) // a pauses past its lease
	lead(t, b, "b")
	for name, update := range map[string]func(*Store, func(kv.Tx) error) error{"Update": (*Store).Update, "Batch": (*Store).Batch} {
		if err := putK(a, update, "a-stale"); !errors.Is(err, kv.ErrFenced) {
			t.Errorf("old leader's %s after takeover: %v, want ErrFenced", name, err)
		}
	}
	if got := readK(t, a); got != "a2" {
		t.Fatalf("after fenced writes k = %q, want a2", got)
	}
	must(t, putK(a, (*Store).UpdateUnfenced, "a-unfenced"))
	if got := readK(t, b); got != "a-unfenced" {
		t.Fatalf("after an unfenced write k = %q", got)
	}
	must(t, putK(b, (*Store).Update, "b1"))
	a.Fencing(false)
	must(t, putK(a, (*Store).Update, "a-unfenced-store"))
}

// TestTakeoverWaitsForFencedWrite shows why the fence locks the lease row:
// a fenced transaction that passed its check holds the row FOR SHARE, so
// a takeover waits until it commits, and every later write of the old
// leader is fenced. (An Update sends its lock and lease check with its
// first statement: Origin's below.)
func TestTakeoverWaitsForFencedWrite(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	a, b, admin := open(t, dsn), open(t, dsn), conn(t, dsn)
	ctx := context.Background()
	a.Fencing(true)
	lead(t, a, "a")
	expire(t, admin)
	took := make(chan LeaderInfo, 1)
	must(t, putK(a, func(s *Store, fn func(kv.Tx) error) error {
		return s.Update(func(tx kv.Tx) error {
			if _, err := tx.Origin(); err != nil {
				return err
			}
			go func() {
				info, err := b.TryLead(ctx, "b", longTTL)
				if err != nil {
					t.Error(err)
				}
				took <- info
			}()
			waitForLockWait(t, admin)
			select {
			case info := <-took:
				t.Fatalf("takeover finished while a fenced write was open: %+v", info)
			default:
			}
			return fn(tx)
		})
	}, "a-last"))
	if info := <-took; !info.Self || info.Epoch != 2 {
		t.Fatalf("b's takeover = %+v", info)
	}
	if got := readK(t, b); got != "a-last" {
		t.Errorf("k = %q, want a's last fenced write", got)
	}
	if err := putK(a, (*Store).Update, "a-late"); !errors.Is(err, kv.ErrFenced) {
		t.Errorf("a's write after the takeover: %v, want ErrFenced", err)
	}
}

// waitForLockWait polls until some session waits on a row lock.
func waitForLockWait(t *testing.T, admin *pgx.Conn) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := admin.QueryRow(context.Background(),
			"SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no session waited on the lease row within 20s")
}

// TestStalledLeaderCannotBlockTakeover stalls the leader inside a fenced
// write (as SIGSTOP would): the server ends its idle session, a standby
// takes over, and when the old leader resumes its transaction fails and
// commits nothing.
func TestStalledLeaderCannotBlockTakeover(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	a, err := Open(ctx, dsn, Options{IdleInTxTimeout: 100 * time.Millisecond, Fencing: true, Projection: NoTables})
	must(t, err)
	t.Cleanup(func() { a.Close() })
	b, admin := open(t, dsn), conn(t, dsn)
	lead(t, a, "a")
	must(t, putK(a, (*Store).Update, "a1"))
	expire(t, admin)

	err = putK(a, func(s *Store, fn func(kv.Tx) error) error {
		return s.Update(func(tx kv.Tx) error {
			if err := fn(tx); err != nil { // written, not committed
				return err
			}
			tookOver := takeOver(t, b)
			info, ok := <-tookOver // a stalls until b leads
			if !ok || info.Epoch != 2 {
				t.Errorf("no takeover while the leader stalled: %+v", info)
			}
			return tx.Bucket([]byte("rows")).Put([]byte("k2"), []byte("after the stall"))
		})
	}, "a-stalled")
	if err == nil {
		t.Fatal("the stalled leader's transaction committed")
	}
	if got := readK(t, b); got != "a1" {
		t.Errorf("k = %q after the stalled transaction, want a1", got)
	}
	if err := putK(a, (*Store).Update, "a-late"); !errors.Is(err, kv.ErrFenced) {
		t.Errorf("a's next write: %v, want ErrFenced", err)
	}
}

// takeOver starts b's TryLead, which waits on the lease row while the
// stalled leader's session lives; without the server's idle timeout it
// would wait until its deadline.
func takeOver(t *testing.T, b *Store) <-chan LeaderInfo {
	tookOver := make(chan LeaderInfo, 1)
	go func() {
		wait, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		info, err := b.TryLead(wait, "b", longTTL)
		if err != nil || !info.Self {
			t.Errorf("b's TryLead: %+v, %v", info, err)
			close(tookOver)
			return
		}
		tookOver <- info
	}()
	return tookOver
}
