package postgres

import (
	"context"
	"strconv"
	"testing"

	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state/kv"
	"github.com/batchd/batchd/internal/state/kv/kvtest"
)

// TestBatchesSerialisedAcrossStores: optimistic transactions (Batch) of
// two instances on one ledger, with a locked one (Update) of a third
// mixed in, never lose an increment: each commit checks what it read,
// under the write lock.
func TestBatchesSerialisedAcrossStores(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	a, b, c := open(t, dsn), open(t, dsn), open(t, dsn)
	kvtest.IncrementFrom(t, []kv.Store{a, b, c}, 40, func(s kv.Store, fn func(kv.Tx) error) error {
		if s == c {
			return s.Update(fn)
		}
		return s.Batch(fn)
	})
}

// TestConflictRunsAgainOnWhatChanged: a key an optimistic transaction
// read (through the cache, a page, or the database) is changed by
// another instance before it commits; the commit is refused and the
// transaction runs again on the new value, so the write is never made
// on the stale one.
func TestConflictRunsAgainOnWhatChanged(t *testing.T) {
	for _, read := range []struct {
		name string
		fn   func(b kv.Bucket) []byte
	}{
		{"get", func(b kv.Bucket) []byte { return b.Get([]byte("n")) }},
		{"getmany", func(b kv.Bucket) []byte { return b.GetMany([][]byte{[]byte("n")})[0] }},
		{"page", func(b kv.Bucket) []byte { _, v := b.Cursor().Seek([]byte("n")); return v }},
	} {
		t.Run(read.name, func(t *testing.T) {
			dsn := pgtest.NewDatabase(t)
			a, other := open(t, dsn), open(t, dsn)
			setN(t, a, "1") // a's cache knows n = 1
			seen := incrementN(t, a, read.fn, func() {
				setN(t, other, "5") // another instance writes between the read and the commit
			})
			if len(seen) != 2 || seen[0] != "1" || seen[1] != "5" {
				t.Errorf("runs read %q, want 1 then 5", seen)
			}
			if got := readN(t, other); got != "6" {
				t.Errorf("n = %s, want 6 (5 + 1: the stale read's write refused)", got)
			}
		})
	}
}

// TestConflictOnABucketReadAbsent: a bucket an optimistic transaction
// read absent is made by another instance before it commits; the commit
// is refused, and the run again sees the bucket.
func TestConflictOnABucketReadAbsent(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	a, other := open(t, dsn), open(t, dsn)
	must(t, a.Update(func(tx kv.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte("b"))
		return err
	}))
	var saw []bool
	must(t, a.run(optimistic, false, func(tx *tx) error {
		saw = append(saw, tx.Bucket([]byte("late")) != nil)
		if len(saw) == 1 {
			must(t, other.Update(func(tx kv.Tx) error {
				_, err := tx.CreateBucketIfNotExists([]byte("late"))
				return err
			}))
		}
		return tx.Bucket([]byte("b")).Put([]byte("k"), []byte("v"))
	}))
	if len(saw) != 2 || saw[0] || !saw[1] {
		t.Errorf("runs saw the bucket %v, want absent then present", saw)
	}
}

// TestConflictOnAnOriginTakenFromTheProcess: an optimistic transaction
// takes the origin its process last read; when the live server is another
// (here: a remembered origin made up, differing in each of its parts),
// its commit is refused and the run again reads the live one.
func TestConflictOnAnOriginTakenFromTheProcess(t *testing.T) {
	a := open(t, pgtest.NewDatabase(t))
	var live kv.Origin
	must(t, a.Update(func(tx kv.Tx) error {
		o, err := tx.Origin()
		live = o
		return err
	}))
	for name, o := range map[string]kv.Origin{
		"system":   {System: live.System + 1, Timeline: live.Timeline, Database: live.Database},
		"timeline": {System: live.System, Timeline: live.Timeline + 1, Database: live.Database},
		"database": {System: live.System, Timeline: live.Timeline, Database: live.Database + 1},
	} {
		a.origin.Store(&o)
		var saw []kv.Origin
		must(t, a.run(optimistic, false, func(tx *tx) error {
			o, err := tx.Origin()
			saw = append(saw, o)
			return err
		}))
		if len(saw) != 2 || saw[0] == live || saw[1] != live {
			t.Errorf("another %s: runs saw origins %v, want the made-up one, then the live %v", name, saw, live)
		}
	}
}

// TestReadOnlyGetManyFillsTheCache: keys a View reads together fill the
// value cache, which an optimistic transaction then reads without the
// database; when another instance has changed one since, the commit is
// refused and the run again reads the database: a guess, never a
// decision.
func TestReadOnlyGetManyFillsTheCache(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	a, other := open(t, dsn), open(t, dsn)
	setN(t, other, "1") // a's cache knows nothing of n
	must(t, a.View(func(tx kv.Tx) error {
		if got := string(tx.Bucket([]byte("b")).GetMany([][]byte{[]byte("n")})[0]); got != "1" {
			t.Errorf("the view read n = %q, want 1", got)
		}
		return nil
	}))
	setN(t, other, "5")
	seen := incrementN(t, a, func(b kv.Bucket) []byte { return b.Get([]byte("n")) }, func() {})
	if len(seen) != 2 || seen[0] != "1" || seen[1] != "5" {
		t.Errorf("runs read %q, want 1 (the view's, cached) then 5", seen)
	}
	if got := readN(t, other); got != "6" {
		t.Errorf("n = %s, want 6", got)
	}
}

// TestViewRollbackFreesItsConnection: a View's rollback runs after it
// returns, and its connection goes back to the pool only once it is out
// of the transaction: with one connection, each View after another still
// begins afresh and sees what was committed in between.
func TestViewRollbackFreesItsConnection(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	other := open(t, dsn)
	one, err := Open(context.Background(), dsn, Options{MaxConns: 1, Projection: NoTables})
	if err != nil {
		t.Fatal(err)
	}
	if n := one.pool.Config().MaxConns; n != 1 {
		t.Fatalf("a pool of %d connections, want 1", n)
	}
	for i := range 20 {
		v := strconv.Itoa(i)
		setN(t, other, v)
		must(t, one.View(func(tx kv.Tx) error {
			if got := string(tx.Bucket([]byte("b")).GetMany([][]byte{[]byte("n")})[0]); got != v {
				t.Errorf("view %d read n = %q, want %s", i, got, v)
			}
			return nil
		}))
	}
	if err := one.Close(); err != nil {
		t.Fatal(err)
	}
}

// setN sets key n of bucket b to v, through s.
func setN(t *testing.T, s *Store, v string) {
	t.Helper()
	must(t, s.Update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("b"))
		if err != nil {
			return err
		}
		return b.Put([]byte("n"), []byte(v))
	}))
}

// readN is key n of bucket b, as s reads it.
func readN(t *testing.T, s *Store) string {
	t.Helper()
	var got string
	must(t, s.View(func(tx kv.Tx) error { got = string(tx.Bucket([]byte("b")).Get([]byte("n"))); return nil }))
	return got
}

// incrementN adds one to n in an optimistic transaction of s, which reads
// n with read; between runs after the first read, before its commit. It
// returns what each run read.
func incrementN(t *testing.T, s *Store, read func(kv.Bucket) []byte, between func()) []string {
	t.Helper()
	var seen []string
	must(t, s.run(optimistic, false, func(tx *tx) error {
		b := tx.Bucket([]byte("b"))
		v := string(read(b))
		seen = append(seen, v)
		if len(seen) == 1 {
			between()
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return err
		}
		return b.Put([]byte("n"), []byte(strconv.Itoa(n+1)))
	}))
	return seen
}
