package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
	"github.com/jackc/pgx/v5"
)

// A test API key: the commands here never call the API, but the config
// must have one.
const migrateTestKey = "sk_test_x1234567890"

// pgServer runs a private PostgreSQL server for t, on which each
// NewDatabase is a fresh, empty database.
func pgServer(t *testing.T) *pgtest.Server {
	t.Helper()
	s, err := pgtest.NewServer()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return s
}

// ledgerConfigs writes two configs for stateDir, in dir: the bbolt
// ledger's, and the PostgreSQL ledger's (the DSN in the environment
// returned).
func ledgerConfigs(t *testing.T, dir, stateDir, dsn string) (bboltCfg, pgCfg string, env map[string]string) {
	t.Helper()
	base := fmt.Sprintf("state_dir: %s\napi: {base_url: http://127.0.0.1:1}\n", stateDir)
	bboltCfg = writeConfigAs(t, dir, "bbolt.yaml", base)
	// The copied rows' account numbers are sealed under the bbolt
	// ledger's key ring, which migrate-state tells to name.
	pgCfg = writeConfigAs(t, dir, "postgres.yaml", base+fmt.Sprintf("state: {backend: postgres, account_keys_file: %s}\nbackup: {schedule: \"\"}\n",
		filepath.Join(stateDir, acctseal.FileName)))
	return bboltCfg, pgCfg, map[string]string{"BATCHD_API_KEY": migrateTestKey, "BATCHD_POSTGRES_DSN": dsn}
}

func writeConfigAs(t *testing.T, dir, name, yaml string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// fileState is a file's bytes and modification time.
type fileState struct {
	data  []byte
	mtime time.Time
}

func readFileState(t *testing.T, path string) fileState {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{data: b, mtime: fi.ModTime()}
}

// demoLedgers runs the demo in a new directory and returns its state
// directory, a fresh database on srv, and the configs of the demo's
// bbolt ledger and of that database (ledgerConfigs).
func demoLedgers(t *testing.T, srv *pgtest.Server) (stateDir, dsn, bboltCfg, pgCfg string, env map[string]string) {
	t.Helper()
	dir := t.TempDir()
	must(t, nil, "demo", "--dir", filepath.Join(dir, "demo"), "--date", "2026-11-25")
	stateDir = filepath.Join(dir, "demo", "state")
	dsn = srv.NewDatabase(t)
	bboltCfg, pgCfg, env = ledgerConfigs(t, dir, stateDir, dsn)
	return stateDir, dsn, bboltCfg, pgCfg, env
}

// countsLine is `batchd check`'s line of counts.
var countsLine = regexp.MustCompile(`(?m)^\d+ batches, \d+ rows .*checks$`)

// must runs a command line that must succeed, and returns its output.
func must(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	code, out, errOut := runMain(t, env, args...)
	if code != exitOK {
		t.Fatalf("batchd %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// TestMigrateStateRoundTripsTheDemo copies the demo's ledger into
// PostgreSQL: the copy checks OK with the bbolt ledger's counts, status
// shows the same rows, the bbolt file is untouched, a second copy into
// the same database is refused, and so is a copy of a ledger a batchd
// holds.
func TestMigrateStateRoundTripsTheDemo(t *testing.T) {
	srv := pgServer(t)
	stateDir, _, bboltCfg, pgCfg, env := demoLedgers(t, srv)

	wantCheck := must(t, env, "check", "--config", bboltCfg)
	wantStatus := must(t, env, "status", "--config", bboltCfg, "--json")
	ledger := filepath.Join(stateDir, state.FileName)
	before := readFileState(t, ledger)

	start := time.Now()
	out := must(t, env, "migrate-state", "--config", bboltCfg, "--from", "bbolt", "--to", "postgres")
	t.Logf("migrate-state took %s:\n%s", time.Since(start).Round(time.Millisecond), out)
	for _, want := range []string{"checked both: OK", "the bbolt file is unchanged", "state.backend: postgres", "never start batchd on the bbolt ledger again"} {
		if !strings.Contains(out, want) {
			t.Fatalf("migrate-state's output lacks %q:\n%s", want, out)
		}
	}
	if after := readFileState(t, ledger); !bytes.Equal(after.data, before.data) || !after.mtime.Equal(before.mtime) {
		t.Fatalf("migrate-state changed the bbolt file (mtime %v, was %v)", after.mtime, before.mtime)
	}
	if left, _ := filepath.Glob(filepath.Join(stateDir, ".migrate-*")); len(left) > 0 {
		t.Fatalf("migrate-state left its private copy: %v", left)
	}

	gotCheck := must(t, env, "check", "--config", pgCfg)
	t.Logf("check on postgres:\n%s", gotCheck)
	if want, got := countsLine.FindString(wantCheck), countsLine.FindString(gotCheck); want == "" || got != want || !strings.Contains(gotCheck, "verdict: OK") {
		t.Fatalf("check on postgres:\n%s\nwant the counts %q", gotCheck, want)
	}
	if got := must(t, env, "status", "--config", pgCfg, "--json"); got != wantStatus {
		t.Fatalf("status on postgres:\n%s\nwant, as on bbolt:\n%s", got, wantStatus)
	}

	code, _, errOut := runMain(t, env, "migrate-state", "--config", bboltCfg, "--from", "bbolt", "--to", "postgres")
	t.Logf("a second migrate-state: %s", errOut)
	if code != exitFailure || !strings.Contains(errOut, "already holds a ledger") {
		t.Fatalf("a second migrate-state into the same database: exit %d: %s", code, errOut)
	}

	held, err := state.Open(stateDir, state.Options{NoSnapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runMain(t, map[string]string{"BATCHD_API_KEY": migrateTestKey, "BATCHD_POSTGRES_DSN": srv.NewDatabase(t)},
		"migrate-state", "--config", bboltCfg, "--from", "bbolt", "--to", "postgres")
	held.Close()
	t.Logf("migrate-state of a held ledger: %s", errOut)
	if code != exitFailure || !strings.Contains(errOut, "stop batchd first") {
		t.Fatalf("migrate-state of a ledger a batchd holds: exit %d: %s", code, errOut)
	}
}

// TestMigrateStateFlags: only bbolt to postgres, and a DSN is needed.
func TestMigrateStateFlags(t *testing.T) {
	dir := t.TempDir()
	bboltCfg, _, _ := ledgerConfigs(t, dir, filepath.Join(dir, "state"), "")
	env := map[string]string{"BATCHD_API_KEY": migrateTestKey}
	for _, args := range [][]string{{"--from", "postgres", "--to", "bbolt"}, {"--from", "bbolt"}, {}} {
		code, _, errOut := runMain(t, env, append([]string{"migrate-state", "--config", bboltCfg}, args...)...)
		if code != exitUsage || !strings.Contains(errOut, "only --from bbolt --to postgres is supported") {
			t.Fatalf("migrate-state %v: exit %d: %s", args, code, errOut)
		}
	}
	code, _, errOut := runMain(t, env, "migrate-state", "--config", bboltCfg, "--from", "bbolt", "--to", "postgres")
	if code != exitFailure || !strings.Contains(errOut, "$BATCHD_POSTGRES_DSN") {
		t.Fatalf("migrate-state without a DSN: exit %d: %s", code, errOut)
	}
}

// TestMarkRestored: on a PostgreSQL ledger put back by the operator's
// tools, mark-restored puts every row without a check in doubt and gives
// the ledger a new instance; it is refused while a daemon leads, and on a
// bbolt ledger.
func TestMarkRestored(t *testing.T) {
	srv := pgServer(t)
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	loadRows(t, stateDir, 3)
	bboltCfg, pgCfg, env := ledgerConfigs(t, dir, stateDir, srv.NewDatabase(t))
	must(t, env, "migrate-state", "--config", bboltCfg, "--from", "bbolt", "--to", "postgres")
	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Second).Format(time.RFC3339)

	code, _, errOut := runMain(t, env, "mark-restored", "--config", bboltCfg, "--at", at)
	if code != exitFailure || !strings.Contains(errOut, "batchd restore --from SNAPSHOT") {
		t.Fatalf("mark-restored on bbolt: exit %d: %s", code, errOut)
	}
	code, _, errOut = runMain(t, env, "mark-restored", "--config", pgCfg, "--at", "yesterday")
	if code != exitUsage || !strings.Contains(errOut, "--at: want an RFC 3339 time") {
		t.Fatalf("mark-restored --at yesterday: exit %d: %s", code, errOut)
	}

	// A daemon leads: refused, and nothing changes.
	daemon := openPostgres(t, pgCfg, env)
	if li, err := daemon.Lead(context.Background(), time.Minute); err != nil || !li.Self {
		t.Fatalf("Lead = %+v, %v", li, err)
	}
	before := daemon.Instance()
	code, _, errOut = runMain(t, env, "mark-restored", "--config", pgCfg, "--at", at)
	t.Logf("mark-restored while a daemon leads: %s", errOut)
	if code != exitFailure || !strings.Contains(errOut, "another batchd instance leads") || !strings.Contains(errOut, "stop every batchd") {
		t.Fatalf("mark-restored while a daemon leads: exit %d: %s", code, errOut)
	}
	if err := daemon.Resign(context.Background()); err != nil {
		t.Fatal(err)
	}
	daemon.Close()

	out := must(t, env, "mark-restored", "--config", pgCfg, "--at", at, "--from", "pg_dump of last night")
	t.Logf("mark-restored:\n%s", out)
	if !strings.Contains(out, "marked the ledger restored to "+at+" (pg_dump of last night)") ||
		!strings.Contains(out, "3 rows without a check were put in doubt") || !strings.Contains(out, "(was "+before+")") {
		t.Fatalf("mark-restored's output:\n%s", out)
	}
	after := openPostgres(t, pgCfg, env)
	if after.Instance() == before {
		t.Fatalf("the instance is still %s", before)
	}
	after.Close()
	check := must(t, env, "check", "--config", pgCfg)
	if !strings.Contains(check, "in doubt 3") || !strings.Contains(check, "from a snapshot taken at "+at) {
		t.Fatalf("check after mark-restored:\n%s", check)
	}
}

// openPostgres opens the PostgreSQL ledger of the config at cfgPath.
func openPostgres(t *testing.T, cfgPath string, env map[string]string) *state.DB {
	t.Helper()
	var out bytes.Buffer
	cfg, err := loadConfig(&environ{stdout: &out, stderr: &out, getenv: func(k string) string { return env[k] },
		lookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}, cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	db, err := jobs.OpenPostgresDB(cfg, state.Options{Holder: "daemon-on-host-b:1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestCheckOnPostgresFindsAFault: a row damaged in the database is a
// fault, and check exits 1.
func TestCheckOnPostgresFindsAFault(t *testing.T) {
	srv := pgServer(t)
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	loadRows(t, stateDir, 3)
	dsn := srv.NewDatabase(t)
	bboltCfg, pgCfg, env := ledgerConfigs(t, dir, stateDir, dsn)
	must(t, env, "migrate-state", "--config", bboltCfg, "--from", "bbolt", "--to", "postgres")
	must(t, env, "check", "--config", pgCfg)

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, `UPDATE kv_keys SET v = '\x00ff'::bytea
		WHERE bucket = 'rows'::bytea AND k = (SELECT k FROM kv_keys WHERE bucket = 'rows'::bytea ORDER BY k LIMIT 1)`)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("damage a row: %v (%d rows)", err, tag.RowsAffected())
	}
	code, out, errOut := runMain(t, env, "check", "--config", pgCfg)
	t.Logf("check on a damaged postgres ledger:\n%s%s", out, errOut)
	if code != exitFailure || !strings.Contains(out, "verdict: DAMAGED") || !strings.Contains(errOut, "mark-restored") {
		t.Fatalf("check on a damaged ledger: exit %d\n%s%s", code, out, errOut)
	}
	// Written outside batchd, the key no longer says what its table's row
	// says (docs/ops-sql.md).
	if !strings.Contains(out, "table batchd_rows key 0x") {
		t.Fatalf("check did not compare the typed tables with the keys:\n%s", out)
	}
}
