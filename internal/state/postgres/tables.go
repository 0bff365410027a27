package postgres

import (
	"context"
	"database/sql"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

// Migration 4 makes the typed tables and views (tables/tables.sql) and
// fills them from kv_keys in place, then compares them with kv_keys key
// by key, all in its one transaction: an installed kv ledger gains its
// tables at its next open, or nothing changes. It is a Go migration
// because the rows come from the ledger's decoding (kv.Projection), which
// no SQL file has.

//go:embed tables/tables.sql
var tablesSQL string

// tablesVersion is migration 4's version.
const tablesVersion = 4

// tablePage is how many keys a backfill or a comparison reads at once.
const tablePage = 1000

// maxFindings bounds the disagreements a comparison lists.
const maxFindings = 100

// tablesMigration is migration 4, filled by p.
func tablesMigration(p *projector) *goose.Migration {
	return goose.NewGoMigration(tablesVersion, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
		if p == nil {
			return errors.New("the typed tables need the ledger's projection (postgres.Options.Projection)")
		}
		if _, err := tx.ExecContext(ctx, tablesSQL); err != nil {
			return fmt.Errorf("create the typed tables: %w", err)
		}
		for _, t := range p.order {
			if err := p.backfill(ctx, tx, t); err != nil {
				return err
			}
		}
		findings, err := p.compare(ctx, tx)
		if err != nil {
			return err
		}
		if len(findings) > 0 {
			return fmt.Errorf("the typed tables disagree with kv_keys after the backfill (%d findings; nothing is changed): %v",
				len(findings), findings)
		}
		return nil
	}}, nil)
}

// pageOf reads up to tablePage keys of bucket after from (all when from
// is nil), in key order.
func pageOf(ctx context.Context, tx *sql.Tx, bucket string, from []byte) (keys, vals [][]byte, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT k, v FROM kv_keys WHERE bucket = $1 AND ($2::bytea IS NULL OR k > $2)
		ORDER BY k LIMIT $3`, []byte(bucket), from, tablePage)
	if err != nil {
		return nil, nil, fmt.Errorf("read bucket %q: %w", bucket, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return nil, nil, fmt.Errorf("read bucket %q: %w", bucket, err)
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read bucket %q: %w", bucket, err)
	}
	return keys, vals, nil
}

// walk calls fn with each page of t's bucket.
func walk(ctx context.Context, tx *sql.Tx, t *table, fn func(keys, vals [][]byte) error) error {
	var from []byte
	for {
		keys, vals, err := pageOf(ctx, tx, t.Bucket, from)
		if err != nil || len(keys) == 0 {
			return err
		}
		if err := fn(keys, vals); err != nil {
			return err
		}
		from = keys[len(keys)-1]
	}
}

// backfill writes t's rows from its bucket's keys.
func (p *projector) backfill(ctx context.Context, tx *sql.Tx, t *table) error {
	return walk(ctx, tx, t, func(keys, vals [][]byte) error {
		rows := make([]json.RawMessage, len(keys))
		for i := range keys {
			row, err := p.project([]byte(t.Bucket), keys[i], vals[i])
			if err != nil {
				return fmt.Errorf("fill the typed tables: %w", err)
			}
			rows[i] = row
		}
		if _, err := tx.ExecContext(ctx, t.upsert, jsonArray(rows)); err != nil {
			return fmt.Errorf("fill table %s: %w", t.Name, err)
		}
		return nil
	})
}

// compare checks every typed table against kv_keys, key by key: each key
// of a fed bucket has its row, with the columns its value projects to,
// and no row lacks its key. It returns what disagrees (at most
// maxFindings), each naming the table and the key.
func (p *projector) compare(ctx context.Context, tx *sql.Tx) ([]Finding, error) {
	if p == nil {
		return nil, nil
	}
	var out []Finding
	for _, t := range p.order {
		f, err := p.compareTable(ctx, tx, t)
		if err != nil {
			return nil, err
		}
		out = append(out, f...)
		if len(out) >= maxFindings {
			return out[:maxFindings], nil
		}
	}
	return out, nil
}

func (p *projector) compareTable(ctx context.Context, tx *sql.Tx, t *table) ([]Finding, error) {
	var out []Finding
	differs := fmt.Sprintf(`SELECT p.kv_key, x.kv_key IS NULL FROM jsonb_populate_recordset(NULL::%[1]s, $1::jsonb) p
		LEFT JOIN %[1]s x ON x.kv_key = p.kv_key WHERE x.kv_key IS NULL OR ROW(x.*) IS DISTINCT FROM ROW(p.*)`, t.Name)
	err := walk(ctx, tx, t, func(keys, vals [][]byte) error {
		var rows []json.RawMessage
		for i := range keys {
			row, err := p.project([]byte(t.Bucket), keys[i], vals[i])
			if err != nil {
				out = append(out, Finding{Where: where(t, keys[i]), What: "its key's value does not decode: " + err.Error()})
				continue
			}
			rows = append(rows, row)
		}
		found, err := keysOf(ctx, tx, differs, jsonArray(rows))
		for _, f := range found {
			what := "the row differs from its key's value"
			if f.flag {
				what = "the row is missing (the key is in kv_keys)"
			}
			out = append(out, Finding{Where: where(t, f.key), What: what})
		}
		if len(out) >= maxFindings {
			return errEnough
		}
		return err
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, fmt.Errorf("compare table %s with kv_keys: %w", t.Name, err)
	}
	strays, err := keysOf(ctx, tx, fmt.Sprintf(`SELECT kv_key, false FROM %s x WHERE NOT EXISTS
		(SELECT 1 FROM kv_keys WHERE bucket = $1 AND k = x.kv_key) ORDER BY kv_key LIMIT %d`, t.Name, maxFindings), []byte(t.Bucket))
	if err != nil {
		return nil, fmt.Errorf("compare table %s with kv_keys: %w", t.Name, err)
	}
	for _, f := range strays {
		out = append(out, Finding{Where: where(t, f.key), What: fmt.Sprintf("a stray row (its key is not in bucket %q)", t.Bucket)})
	}
	return out, nil
}

// Finding is one disagreement of a typed table with kv_keys: Where names
// the table and the key, What what is wrong.
type Finding struct {
	Where, What string
}

func (f Finding) String() string { return f.Where + ": " + f.What }

func where(t *table, key []byte) string { return fmt.Sprintf("table %s key %s", t.Name, keyText(key)) }

// errEnough stops a comparison that has found enough.
var errEnough = errors.New("enough findings")

type keyFlag struct {
	key  []byte
	flag bool
}

// keysOf runs a query of (key, flag) rows.
func keysOf(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]keyFlag, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []keyFlag
	for rows.Next() {
		var f keyFlag
		if err := rows.Scan(&f.key, &f.flag); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// CheckTables compares the typed tables with kv_keys, key by key, in one
// repeatable-read snapshot (docs/ops-sql.md): what `batchd check` adds on
// a PostgreSQL ledger. Each finding names the table and the key: a row
// missing, stray (written outside batchd, or left by a bug) or different
// from what its key's value says.
func (s *Store) CheckTables(ctx context.Context) ([]Finding, error) {
	db := stdlib.OpenDBFromPool(s.pool)
	defer db.Close()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("%s: check the typed tables: %w", s.Name(), err)
	}
	defer tx.Rollback()
	f, err := s.proj.compare(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("%s: check the typed tables: %w", s.Name(), err)
	}
	return f, nil
}
