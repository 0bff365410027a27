package statetest_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/state/kv"
	"github.com/batchd/batchd/internal/state/postgres"
	"github.com/batchd/batchd/internal/state/statetest"
)

// TestMain stops the shared PostgreSQL server (pgtest) after the tests.
func TestMain(m *testing.M) { pgtest.Main(m) }

// TestPostgres runs the conformance suite on the PostgreSQL ledger, each
// test in a fresh database of one private server.
func TestPostgres(t *testing.T) {
	statetest.Run(t, statetest.Backend{Name: "postgres", New: newPostgresLedger})
}

// postgresLedger is a ledger in a database of its own. A restore moves it
// to another database (the copy), as an operator's restore does.
type postgresLedger struct {
	dsn string
	now func() time.Time // the clock of the last Open: a snapshot's time
}

// postgresSnapshot is the operator's backup of the database: a copy in a
// database of its own, and the moment it is of.
type postgresSnapshot struct {
	dsn string
	at  time.Time
}

func newPostgresLedger(t testing.TB) statetest.Ledger {
	return &postgresLedger{dsn: pgtest.NewDatabase(t)}
}

func (l *postgresLedger) Open(t testing.TB, opts state.Options) *state.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := postgres.Open(ctx, l.dsn, postgres.Options{Fencing: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err := state.OpenStore(store, store.Elector(), opts)
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	// Fenced as in production: the ledger writes only under the lease.
	// A lease of a millisecond runs out at once, so the next Open of the
	// same ledger (a restart, in the tests that reopen) takes over as a
	// standby would once the lease ran out.
	if li, err := d.Lead(ctx, time.Millisecond); err != nil || !li.Self {
		d.Close()
		t.Fatalf("take the test ledger's lease: %+v, %v", li, err)
	}
	t.Cleanup(func() { d.Close() })
	// Runs first: whatever the test did, the typed tables agree with the
	// keys (docs/ops-sql.md).
	dsn := l.dsn
	t.Cleanup(func() { checkTables(t, dsn) })
	l.now = opts.Now
	return d
}

// checkTables compares the typed tables of the ledger in dsn with its
// keys (postgres.Store.CheckTables), through a store of its own.
func checkTables(t testing.TB, dsn string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Errorf("check the typed tables: %v", err)
		return
	}
	defer s.Close()
	found, err := s.CheckTables(ctx)
	if err != nil || len(found) > 0 {
		t.Errorf("the typed tables disagree with the keys: %v %v", found, err)
	}
}

// Snapshot copies the ledger into a fresh database (DB.CopyTo), as
// pg_dump and a restore of the dump into a new database would.
func (l *postgresLedger) Snapshot(t testing.TB, d *state.DB) statetest.Snapshot {
	t.Helper()
	snap := postgresSnapshot{dsn: pgtest.NewDatabase(t), at: l.now()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dst, err := postgres.Open(ctx, snap.dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := d.CopyTo(ctx, dst); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return snap
}

// Restore makes the snapshot's database the ledger's and tells it it was
// put back, at time at, to the snapshot's moment (`batchd mark-restored`).
func (l *postgresLedger) Restore(t testing.TB, s statetest.Snapshot, at time.Time) *state.RestoreMark {
	t.Helper()
	snap := s.(postgresSnapshot)
	l.dsn = snap.dsn
	now := l.now // the test's clock, not the restore's moment
	defer func() { l.now = now }()
	d := l.Open(t, state.Options{Now: func() time.Time { return at }})
	m, err := d.MarkRestored(snap.at, "a copy of the database")
	if err != nil {
		t.Fatalf("mark restored: %v", err)
	}
	rep, err := d.Check()
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("the restored ledger: %v", rep.Faults)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return m
}

// postgresOlder is an older copy of a ledger's database: a copy in a
// database of its own, and the origin the ledger had then, which the
// database's own copies (a standby, a dump, a storage snapshot) carry.
type postgresOlder struct {
	dsn    string
	origin []byte
}

// Older copies the ledger into a fresh database, keeping its origin.
func (l *postgresLedger) Older(t testing.TB, d *state.DB) statetest.Snapshot {
	t.Helper()
	o := postgresOlder{dsn: pgtest.NewDatabase(t)}
	withStore(t, l.dsn, func(s *postgres.Store) {
		s.View(func(tx kv.Tx) error {
			o.origin = bytes.Clone(tx.Bucket([]byte("meta")).Get([]byte("origin")))
			return nil
		})
	})
	if o.origin == nil {
		t.Fatal("the ledger keeps no origin after its writes")
	}
	withStore(t, o.dsn, func(dst *postgres.Store) {
		if _, err := d.CopyTo(context.Background(), dst); err != nil {
			t.Fatalf("older copy: %v", err)
		}
	})
	return o
}

// PutBack puts the older copy in the ledger's place. Not in place: the
// copy's database becomes the ledger's, with the origin the ledger had
// (as a restored dump carries it), and the ledger is opened there. In
// place: the ledger's database gets the copy's keys back under the open
// d, origin included: a storage snapshot rolled back.
func (l *postgresLedger) PutBack(t testing.TB, d *state.DB, older statetest.Snapshot, inPlace bool, opts state.Options) (*state.DB, error) {
	t.Helper()
	o := older.(postgresOlder)
	putOrigin := func(tx kv.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte("origin"), o.origin) }
	if !inPlace {
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		withStore(t, o.dsn, func(s *postgres.Store) {
			if err := s.UpdateUnfenced(putOrigin); err != nil {
				t.Fatal(err)
			}
		})
		l.dsn = o.dsn
		return l.Open(t, opts), nil
	}
	withStore(t, o.dsn, func(src *postgres.Store) {
		withStore(t, l.dsn, func(dst *postgres.Store) {
			err := src.View(func(from kv.Tx) error {
				return dst.UpdateUnfenced(func(to kv.Tx) error { return replaceKeys(from, to) })
			})
			if err == nil {
				err = dst.UpdateUnfenced(putOrigin)
			}
			if err != nil {
				t.Fatalf("roll the ledger back in place: %v", err)
			}
		})
	})
	return d, nil
}

// replaceKeys makes to's buckets and keys those of from. A storage
// rollback is no batchd transaction: it moves check ids back, so it
// declares itself a prune for the owner rule to let them go.
func replaceKeys(from, to kv.Tx) error {
	if err := to.DeclarePrune(); err != nil {
		return err
	}
	var names [][]byte
	to.ForEachBucket(func(name []byte) error { names = append(names, bytes.Clone(name)); return nil })
	for _, n := range names {
		if err := to.DeleteBucket(n); err != nil {
			return err
		}
	}
	return from.ForEachBucket(func(name []byte) error {
		src := from.Bucket(name)
		dst, err := to.CreateBucketIfNotExists(name)
		if err != nil {
			return err
		}
		if err := dst.SetSequence(src.Sequence()); err != nil {
			return err
		}
		return src.ForEach(func(k, v []byte) error { return dst.Put(k, v) })
	})
}

// withStore opens the database of dsn as a bare store for fn.
func withStore(t testing.TB, dsn string, fn func(*postgres.Store)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fn(s)
}
