package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state/kv"
)

// The uniqueness money depends on is the database's, whatever code writes
// the tables: these tests write with plain SQL.

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// plainSQL opens a fresh ledger database with its schema and returns one
// connection to it and a function running SQL on that connection, with
// the buckets checks, src_ids and rows created.
func plainSQL(t *testing.T) (*pgx.Conn, func(sql string) error) {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	open(t, dsn)
	db := conn(t, dsn)
	exec := func(sql string) error {
		_, err := db.Exec(context.Background(), sql)
		return err
	}
	must(t, exec(`INSERT INTO kv_buckets (name) VALUES ('checks'), ('src_ids'), ('rows')`))
	return db, exec
}

func TestOwnerNeverMoves(t *testing.T) {
	_, exec := plainSQL(t)
	for _, bucket := range []string{"checks", "src_ids"} {
		must(t, exec(`INSERT INTO kv_keys VALUES ('`+bucket+`', 'id1', 'row1')`))
		err := exec(`UPDATE kv_keys SET v = 'row2' WHERE bucket = '` + bucket + `' AND k = 'id1'`)
		if sqlState(err) != "23505" {
			t.Errorf("%s: moving an owner: %v, want unique_violation", bucket, err)
		}
		err = exec(`INSERT INTO kv_keys VALUES ('` + bucket + `', 'id1', 'row3') ON CONFLICT (bucket, k) DO UPDATE SET v = EXCLUDED.v`)
		if sqlState(err) != "23505" {
			t.Errorf("%s: upserting another owner: %v, want unique_violation", bucket, err)
		}
		must(t, exec(`UPDATE kv_keys SET v = 'row1' WHERE bucket = '`+bucket+`' AND k = 'id1'`)) // same owner
	}
	// Other buckets' values change freely.
	must(t, exec(`INSERT INTO kv_keys VALUES ('rows', 'r', 'v1')`))
	must(t, exec(`UPDATE kv_keys SET v = 'v2' WHERE bucket = 'rows'`))
}

func TestOwnerMoveFailsTheTransaction(t *testing.T) {
	s := open(t, pgtest.NewDatabase(t))
	put := func(k, v string) error {
		return inChecks(s, false, func(b, o kv.Bucket) error {
			if err := o.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
			b.Put([]byte(k), []byte(v)) // error ignored: the tx must fail anyway
			return nil
		})
	}
	must(t, put("chk", "row1"))
	must(t, put("chk", "row1"))
	if err := put("chk", "row2"); sqlState(err) != "23505" {
		t.Fatalf("moving a check to another row: %v, want unique_violation", err)
	}
	must(t, s.View(func(tx kv.Tx) error {
		if v := tx.Bucket([]byte("other")).Get([]byte("chk")); string(v) != "row1" {
			t.Errorf("the failed transaction's other write committed: %q", v)
		}
		return nil
	}))
}

func TestFilesAndEventsUniqueByKey(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	open(t, dsn)
	db := conn(t, dsn)
	ctx := context.Background()
	if _, err := db.Exec(ctx, `INSERT INTO kv_buckets (name) VALUES ('files'), ('hook_events')`); err != nil {
		t.Fatal(err)
	}
	for _, bucket := range []string{"files", "hook_events"} {
		ins := `INSERT INTO kv_keys VALUES ('` + bucket + `', 'sha256-or-event-id', $1)`
		if _, err := db.Exec(ctx, ins, []byte("first")); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, ins, []byte("second")); sqlState(err) != "23505" {
			t.Errorf("%s: a second row with one key: %v, want unique_violation", bucket, err)
		}
	}
	if _, err := db.Exec(ctx, `INSERT INTO kv_keys VALUES ('files', 'h', NULL)`); sqlState(err) != "23502" {
		t.Errorf("a NULL value: %v, want not_null_violation", err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO kv_keys VALUES ('nobucket', 'h', '')`); sqlState(err) != "23503" {
		t.Errorf("a key of no bucket: %v, want foreign_key_violation", err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO leader VALUES (2, 'x', 1, now())`); sqlState(err) != "23514" {
		t.Errorf("a second leader row: %v, want check_violation", err)
	}
}

// TestOwnerLeavesOnlyThroughPrune: a delete and a new insert would move a
// check or source id to another row in two statements; the database
// refuses the delete (and an update renaming the key or moving it out of
// its bucket) unless the transaction declared itself a prune, and the
// declaration ends with its transaction.
func TestOwnerLeavesOnlyThroughPrune(t *testing.T) {
	db, exec := plainSQL(t) // one connection: a leaked setting would show
	for _, bucket := range []string{"checks", "src_ids"} {
		where := ` WHERE bucket = '` + bucket + `' AND k = 'id1'`
		must(t, exec(`INSERT INTO kv_keys VALUES ('`+bucket+`', 'id1', 'row1')`))
		if err := exec(`BEGIN; DELETE FROM kv_keys` + where + `; INSERT INTO kv_keys VALUES ('` + bucket + `', 'id1', 'row2'); COMMIT`); sqlState(err) != "23001" {
			t.Errorf("%s: delete and insert another owner: %v, want restrict_violation", bucket, err)
		}
		must(t, exec(`ROLLBACK`))
		for what, sql := range map[string]string{
			"delete":                 `DELETE FROM kv_keys` + where,
			"rename the key":         `UPDATE kv_keys SET k = 'id2'` + where,
			"move it out the bucket": `UPDATE kv_keys SET bucket = 'rows'` + where,
			"delete the bucket":      `DELETE FROM kv_buckets WHERE name = '` + bucket + `'`,
		} {
			if err := exec(sql); sqlState(err) != "23001" {
				t.Errorf("%s: %s: %v, want restrict_violation", bucket, what, err)
			}
		}
		var owner []byte
		must(t, db.QueryRow(context.Background(), `SELECT v FROM kv_keys`+where).Scan(&owner))
		if string(owner) != "row1" {
			t.Errorf("%s: owner after the refusals = %q, want row1", bucket, owner)
		}
		// A prune removes it; the next transaction is no prune.
		must(t, exec(`BEGIN; SET LOCAL batchd.prune = 'on'; DELETE FROM kv_keys`+where+`; COMMIT`))
		must(t, exec(`INSERT INTO kv_keys VALUES ('`+bucket+`', 'id1', 'row1')`))
		if err := exec(`DELETE FROM kv_keys` + where); sqlState(err) != "23001" {
			t.Errorf("%s: delete after a prune's transaction: %v, want restrict_violation", bucket, err)
		}
	}
	// Other buckets' keys come and go freely.
	must(t, exec(`INSERT INTO kv_keys VALUES ('rows', 'r', 'v1')`))
	must(t, exec(`DELETE FROM kv_keys WHERE bucket = 'rows'`))
}

// TestDeclarePrune is the same through the Store: without DeclarePrune a
// delete of a check id fails the transaction, committing nothing, and the
// id cannot be given to another row; with it, the delete commits; on a
// pool of one connection, the next transaction is refused again.
func TestDeclarePrune(t *testing.T) {
	s, err := Open(context.Background(), pgtest.NewDatabase(t), Options{MaxConns: 1, Projection: NoTables})
	must(t, err)
	t.Cleanup(func() { s.Close() })
	update := func(prune bool, fn func(checks, other kv.Bucket) error) error { return inChecks(s, prune, fn) }
	must(t, update(false, func(b, _ kv.Bucket) error { return b.Put([]byte("chk"), []byte("row1")) }))
	err = update(false, func(b, o kv.Bucket) error {
		must(t, o.Put([]byte("k"), []byte("v")))
		return b.Delete([]byte("chk"))
	})
	if sqlState(err) != "23001" {
		t.Fatalf("deleting a check id outside prune: %v, want restrict_violation", err)
	}
	err = update(false, func(b, _ kv.Bucket) error {
		must(t, b.Delete([]byte("chk")))
		return b.Put([]byte("chk"), []byte("row2"))
	})
	if sqlState(err) != "23001" {
		t.Fatalf("deleting a check id and giving it to another row: %v, want restrict_violation", err)
	}
	must(t, s.View(func(tx kv.Tx) error {
		if v := tx.Bucket([]byte("checks")).Get([]byte("chk")); string(v) != "row1" {
			t.Errorf("check owner after the refused transactions = %q, want row1", v)
		}
		if v := tx.Bucket([]byte("other")).Get([]byte("k")); v != nil {
			t.Errorf("the refused transaction's other write committed: %q", v)
		}
		return nil
	}))
	must(t, update(true, func(b, _ kv.Bucket) error { return b.Delete([]byte("chk")) }))
	must(t, update(false, func(b, _ kv.Bucket) error { return b.Put([]byte("chk"), []byte("row1")) }))
	if err := update(false, func(b, _ kv.Bucket) error { return b.Delete([]byte("chk")) }); sqlState(err) != "23001" {
		t.Fatalf("delete in the transaction after a prune's: %v, want restrict_violation", err)
	}
}

// inChecks runs fn in an Update with the buckets checks and other,
// declared a prune when prune is set.
func inChecks(s *Store, prune bool, fn func(checks, other kv.Bucket) error) error {
	return s.Update(func(tx kv.Tx) error {
		if prune {
			if err := tx.DeclarePrune(); err != nil {
				return err
			}
		}
		b, err := tx.CreateBucketIfNotExists([]byte("checks"))
		if err != nil {
			return err
		}
		o, err := tx.CreateBucketIfNotExists([]byte("other"))
		if err != nil {
			return err
		}
		return fn(b, o)
	})
}
