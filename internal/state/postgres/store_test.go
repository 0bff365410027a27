package postgres

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state/kv"
	"github.com/batchd/batchd/internal/state/kv/kvtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func open(t *testing.T, dsn string) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, dsn, Options{Projection: NoTables})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// conn is a plain connection to the database, beside the Store.
func conn(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func TestKVContract(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.Store { return open(t, pgtest.NewDatabase(t)) })
}

func TestWritesSerialisedAcrossStores(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	a, b := open(t, dsn), open(t, dsn)
	kvtest.IncrementFrom(t, []kv.Store{a, b}, 200, kv.Store.Update)
}

// TestConcurrentOpenMigratesOnce opens one fresh database from several
// instances at once: the migration lock lets one apply the schema.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(context.Background(), dsn, Options{})
			if err != nil {
				t.Error(err)
				return
			}
			s.Close()
		}()
	}
	wg.Wait()
	files, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	var n, distinct int
	if err := conn(t, dsn).QueryRow(context.Background(),
		"SELECT count(*), count(DISTINCT version_id) FROM batchd_schema_version WHERE version_id > 0").Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	// The SQL files, and the Go migration of the typed tables (tables.go).
	if want := len(files) + 1; n != want || distinct != n {
		t.Errorf("%d migrations recorded (%d distinct), want each of the %d once", n, distinct, want)
	}
}

// TestStickyErrorOnDroppedConnection kills the transaction's backend
// mid-transaction: later reads answer absent, the transaction fails
// whatever fn returns, and nothing it wrote is committed.
func TestStickyErrorOnDroppedConnection(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	s := open(t, dsn)
	admin := conn(t, dsn)
	ctx := context.Background()
	must(t, s.Update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("b"))
		must(t, err)
		must(t, b.Put([]byte("k0"), []byte("other")))
		return b.Put([]byte("k"), []byte("before"))
	}))
	var readAfter []byte
	putErr := errors.New("not run")
	err := s.Update(func(ktx kv.Tx) error {
		b := ktx.Bucket([]byte("b"))
		must(t, b.Put([]byte("k"), []byte("after")))
		must(t, b.Put([]byte("new"), []byte("x")))
		pid := ktx.(*tx).pg.PgConn().PID()
		if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
			t.Fatal(err)
		}
		// Writes are buffered (writes.go), so the first read that goes
		// to the database meets the dead connection.
		readAfter = b.Get([]byte("k0"))
		putErr = b.Put([]byte("k2"), []byte("v"))
		return nil // fn decides on what it read, and says all is well
	})
	if err == nil {
		t.Fatal("Update succeeded after its connection was killed")
	}
	if readAfter != nil {
		t.Errorf("a read after the failure answered %q, want absent", readAfter)
	}
	if putErr == nil {
		t.Error("a write after the failure succeeded")
	}
	var v []byte
	if err := admin.QueryRow(ctx, "SELECT v FROM kv_keys WHERE k = 'k'").Scan(&v); err != nil || string(v) != "before" {
		t.Errorf("k = %q, %v after the failed tx; want before", v, err)
	}
	var n int
	admin.QueryRow(ctx, "SELECT count(*) FROM kv_keys WHERE k = 'new'").Scan(&n)
	if n != 0 {
		t.Error("a key put before the failure was committed")
	}
	// The store recovers: the pool drops the dead connection.
	must(t, s.Update(func(tx kv.Tx) error { return tx.Bucket([]byte("b")).Put([]byte("k"), []byte("later")) }))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestNameHidesPassword(t *testing.T) {
	const dsn = "postgres://batchd:s3cret-pw@db.example:6543/ledger?sslmode=disable&connect_timeout=1"
	if got := RedactDSN(dsn); strings.Contains(got, "s3cret") || got != "postgres db.example:6543/ledger" {
		t.Errorf("RedactDSN = %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, bad := range []string{
		"postgres://batchd:s3cret-pw@127.0.0.1:1/ledger?sslmode=disable&connect_timeout=1", // refused
		"postgres://batchd:s3cret-pw@host:notaport/ledger",                                 // unparseable
		"host=127.0.0.1 port=1 user=batchd password=s3cret-pw dbname=ledger connect_timeout=1",
	} {
		_, err := Open(ctx, bad, Options{})
		if err == nil {
			t.Fatalf("Open(%s) succeeded", RedactDSN(bad))
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open's error shows the password: %v", err)
		}
	}
}

// TestStickyErrorInView: a read transaction that loses its connection
// answers absent from then on and returns the error.
func TestStickyErrorInView(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	s, admin := open(t, dsn), conn(t, dsn)
	must(t, s.Update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("b"))
		must(t, err)
		return b.Put([]byte("k"), []byte("v"))
	}))
	err := s.View(func(ktx kv.Tx) error {
		b := ktx.Bucket([]byte("b"))
		if string(b.Get([]byte("k"))) != "v" {
			t.Fatal("k unreadable before the failure")
		}
		pid := ktx.(*tx).pg.PgConn().PID()
		if _, err := admin.Exec(context.Background(), "SELECT pg_terminate_backend($1)", pid); err != nil {
			t.Fatal(err)
		}
		if v := b.Get([]byte("k")); v != nil {
			t.Errorf("Get after the failure = %q, want absent", v)
		}
		if k, _ := b.Cursor().First(); k != nil {
			t.Errorf("cursor after the failure starts at %q, want the end", k)
		}
		if ktx.Bucket([]byte("b")) != nil {
			t.Error("Bucket after the failure is not absent")
		}
		return nil
	})
	if err == nil {
		t.Fatal("View succeeded after its connection was killed")
	}
}
