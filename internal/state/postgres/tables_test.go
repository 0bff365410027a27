package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/state/kv"
	"github.com/batchd/batchd/internal/state/postgres"
)

// fillLedger loads a file of 6 rows into d and moves them on: 3
// submitted (one voided since), one rejected, one in doubt, one left
// pending. It returns the batch.
func fillLedger(t *testing.T, d *state.DB, name string) payment.Batch {
	t.Helper()
	l, err := d.BeginBatch(payment.FileMeta{Name: name, SHA256: "sha-" + name, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		p := payment.Payment{Amount: money.Cents(100 * (i + 1)), Memo: "m", Name: "n", Email: "a@b.c",
			BankRouting: "999900001", BankAccount: fmt.Sprintf("11110000%02d", i+1)}
		if err := l.Add(i+2, p); err != nil {
			t.Fatal(err)
		}
	}
	b, err := l.Commit(6, 0)
	if err != nil {
		t.Fatal(err)
	}
	k := func(line uint32) payment.RowKey { return payment.RowKey{Batch: b.ID, Line: line} }
	for line := uint32(2); line <= 6; line++ {
		if _, err := d.Send(k(line)); err != nil {
			t.Fatal(err)
		}
	}
	for i, line := range []uint32{2, 3, 4} {
		res := payment.CheckResult{CheckID: fmt.Sprintf("%s-chk-%d", name, i), Status: payment.StatusInProcess,
			Created: time.Date(2026, 11, 20+i%2, 15, 0, 0, 0, time.UTC)}
		if _, err := d.Created(k(line), res); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Voided(k(4), "a test void"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Reject(k(5), "refused"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Doubt(k(6), "answer lost"); err != nil {
		t.Fatal(err)
	}
	return b
}

func ledgerOptions(t *testing.T) state.Options {
	clock := clocktest.New(time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC))
	ring, err := acctseal.Ephemeral()
	if err != nil {
		t.Fatal(err)
	}
	return state.Options{Now: clock.Now, AccountKeys: ring}
}

func query(t *testing.T, dsn, sql string, args ...any) []string {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		vals, err := r.Values()
		var s []string
		for _, v := range vals {
			s = append(s, fmt.Sprint(v))
		}
		return strings.Join(s, " "), err
	})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func checkTables(t *testing.T, s *postgres.Store) {
	t.Helper()
	f, err := s.CheckTables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(f) > 0 {
		t.Errorf("the typed tables disagree with kv_keys: %q", f)
	}
}

// TestTablesAnswerSQL writes a ledger through the store and asks its
// tables and views in SQL, as an operator would.
func TestTablesAnswerSQL(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	d := ledgertest.OpenPostgres(t, dsn, ledgerOptions(t))
	b := fillLedger(t, d, "payroll.csv")

	same(t, "rows by state", query(t, dsn, "SELECT state, count(*) FROM batchd_rows GROUP BY 1 ORDER BY 1"),
		[]string{"in_doubt 1", "pending 1", "rejected 1", "submitted 3"})
	same(t, "rows by state per file", query(t, dsn,
		"SELECT file_name, state, rows, amount_cents FROM batchd_rows_by_state WHERE batch_id = $1 ORDER BY state", b.ID),
		[]string{"payroll.csv in_doubt 1 500", "payroll.csv pending 1 600", "payroll.csv rejected 1 400", "payroll.csv submitted 3 600"})
	same(t, "exceptions", query(t, dsn, "SELECT line, state, coalesce(check_status, '-') FROM batchd_exceptions ORDER BY line"),
		[]string{"4 submitted void", "5 rejected -", "6 in_doubt -"})
	// Line 2's check (2026-11-20, $1) is deposited; line 4's ($3, the
	// same day) was voided; line 3's ($2, 2026-11-21) is in process.
	if _, err := d.ObserveStatus(payment.RowKey{Batch: b.ID, Line: 2}, payment.StatusDeposited, time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	same(t, "paid per day", query(t, dsn, `SELECT check_date::text, checks, issued_cents, paid_cents, cancelled_cents, outstanding_cents
		FROM batchd_paid_per_day ORDER BY 1`),
		[]string{"2026-11-20 2 400 100 300 0", "2026-11-21 1 200 0 0 200"})
	same(t, "check owners", query(t, dsn, "SELECT c.check_id, r.line FROM batchd_checks c JOIN batchd_rows r USING (batch_id, line) ORDER BY 1"),
		[]string{"payroll.csv-chk-0 2", "payroll.csv-chk-1 3", "payroll.csv-chk-2 4"})
	same(t, "files", query(t, dsn, "SELECT name, accepted, batch_id = $1 FROM batchd_files", b.ID), []string{"payroll.csv true true"})
	// No full account number, and nothing sealed, in any column.
	if got := query(t, dsn, "SELECT count(*) FROM batchd_rows r WHERE r::text LIKE '%11110000%' OR r::text LIKE '%~%'"); got[0] != "0" {
		t.Errorf("%s rows show an account number", got[0])
	}

	// A check id belongs to one row: a second owner is refused.
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	_, err = c.Exec(context.Background(), `INSERT INTO batchd_checks (kv_key, check_id, batch_id, line)
		VALUES ('\x00', 'payroll.csv-chk-0', $1, 5)`, b.ID)
	if err == nil || !strings.Contains(err.Error(), "batchd_checks_pkey") {
		t.Errorf("a second owner of a check id: %v, want the primary key's refusal", err)
	}
}

// TestTablesMigrateInstalledLedger builds a ledger with the schema of a
// batchd from before the tables (keys only), then opens it with this one:
// the migration fills the tables in place, and they agree with the keys.
func TestTablesMigrateInstalledLedger(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	old, err := postgres.OpenBefore(ctx, dsn, postgres.Options{Fencing: true})
	if err != nil {
		t.Fatal(err)
	}
	opts := ledgerOptions(t)
	d, err := state.OpenStore(old, old.Elector(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ledgertest.Lead(t, d)
	fillLedger(t, d, "a.csv")
	fillLedger(t, d, "b.csv")
	if err := d.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if got := query(t, dsn, "SELECT count(*) FROM pg_tables WHERE tablename = 'batchd_rows'"); got[0] != "0" {
		t.Fatal("the old schema already has the tables")
	}

	s, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	same(t, "rows", query(t, dsn, "SELECT count(*) FROM batchd_rows"), []string{"12"})
	same(t, "rows against keys", query(t, dsn, `SELECT count(*) FROM kv_keys k
		FULL JOIN batchd_rows r ON r.kv_key = k.k WHERE k.bucket = 'rows'::bytea AND r.kv_key IS NOT NULL`), []string{"12"})
	same(t, "checks", query(t, dsn, "SELECT count(*) FROM batchd_checks"), []string{"6"})
	same(t, "batches", query(t, dsn, "SELECT count(*) FROM batchd_batches"), []string{"2"})
	checkTables(t, s)
	d, err = state.OpenStore(s, s.Elector(), opts)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := d.Check()
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Errorf("check after the migration: %v", rep.Faults)
	}
}

// TestCheckTablesFindsWritesOutsideBatchd: a row changed, added or
// removed by hand is a finding naming its table and key.
func TestCheckTablesFindsWritesOutsideBatchd(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	d := ledgertest.OpenPostgres(t, dsn, ledgerOptions(t))
	fillLedger(t, d, "c.csv")
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkTables(t, s)
	query(t, dsn, "UPDATE batchd_rows SET amount_cents = 1 WHERE line = 2")
	query(t, dsn, "DELETE FROM batchd_checks WHERE check_id = 'c.csv-chk-1'")
	query(t, dsn, `INSERT INTO batchd_hook_events (kv_key, id, name, kind, outcome) VALUES ('\x6576', 'ev', 'x', 'check', 'ignored')`)
	f, err := s.CheckTables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"table batchd_rows key 0x000000000000000100000002: the row differs",
		`table batchd_checks key "c.csv-chk-1": the row is missing`,
		`table batchd_hook_events key "ev": a stray row`,
	}
	got := fmt.Sprint(f)
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("findings %q lack %q", f, w)
		}
	}
	if len(f) != len(want) {
		t.Errorf("findings %q, want %d", f, len(want))
	}
}

// TestUndecodableValueFailsItsCommit: a value the projection cannot
// decode fails the write's transaction, naming bucket and key, and
// commits nothing; in a shared commit only its own caller fails.
func TestUndecodableValueFailsItsCommit(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := []byte{0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 2}
	put := func(bucket string, k, v []byte) func(kv.Tx) error {
		return func(tx kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte(bucket))
			if err != nil {
				return err
			}
			return b.Put(k, v)
		}
	}
	err = s.Update(put("rows", key, []byte("not a row")))
	if err == nil || !strings.Contains(err.Error(), `bucket "rows" key 0x000000000000000700000002`) {
		t.Fatalf("an undecodable row: %v, want an error naming bucket and key", err)
	}
	errs := make(chan error, 2)
	go func() { errs <- s.Batch(put("batches", []byte("b"), []byte("{"))) }()
	go func() { errs <- s.Batch(put("jobs", []byte("j"), []byte("ok"))) }()
	var failed int
	for range 2 {
		if err := <-errs; err != nil {
			failed++
			if !strings.Contains(err.Error(), `bucket "batches" key "b"`) {
				t.Errorf("batch: %v", err)
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d batch calls failed, want the undecodable one only", failed)
	}
	same(t, "what committed", query(t, dsn, "SELECT convert_from(bucket, 'UTF8') FROM kv_keys ORDER BY 1"), []string{"jobs"})
}
