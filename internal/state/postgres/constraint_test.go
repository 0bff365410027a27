package postgres

import (
	"context"
	"errors"
	"testing"

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

func TestOwnerNeverMoves(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	open(t, dsn)
	db := conn(t, dsn)
	ctx := context.Background()
	exec := func(sql string) error {
		_, err := db.Exec(ctx, sql)
		return err
	}
	must(t, exec(`INSERT INTO kv_buckets (name) VALUES ('checks'), ('src_ids'), ('rows')`))
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
		return s.Update(func(tx kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("checks"))
			if err != nil {
				return err
			}
			o, err := tx.CreateBucketIfNotExists([]byte("other"))
			if err != nil {
				return err
			}
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
