package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// execSQL runs statements on dsn, failing t on an error.
func execSQL(t *testing.T, dsn string, sqls ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close(ctx)
	for _, sql := range sqls {
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
}

// waitFor polls cond until it holds, for at most d.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClusterAsyncHoldBackLosesWrites checks HoldBack does what the
// failover tests rely on: a row committed on the primary after it is not
// on the standby once promoted, while one from before is. And the
// multi-host DSN reaches the primary first and the promoted standby after
// the primary died.
func TestClusterAsyncHoldBackLosesWrites(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	c := StartCluster(t, ClusterOptions{Databases: []string{"ledger"}})
	t.Logf("cluster up in %s", time.Since(begin).Round(time.Millisecond))
	dsn := c.DSN("ledger")
	if dir := query(t, dsn, "SHOW unix_socket_directories"); dir != c.Primary.Dir() {
		t.Fatalf("the cluster DSN reached %s, want the primary %s", dir, c.Primary.Dir())
	}
	execSQL(t, dsn, "CREATE TABLE x (i int)", "INSERT INTO x VALUES (1)")
	waitFor(t, "row 1 on the standby", 10*time.Second, func() bool {
		var n int
		err := c.Standby.queryRowIn(context.Background(), "ledger", "SELECT count(*) FROM x WHERE i = 1", nil, &n)
		return err == nil && n == 1 // x may not have reached it yet
	})
	if err := c.HoldBack(); err != nil {
		t.Fatal(err)
	}
	execSQL(t, dsn, "INSERT INTO x VALUES (2)")
	// The primary flushes its WAL before the kill, so row 2 would reach a
	// standby still receiving: its absence is HoldBack's doing.
	execSQL(t, c.Primary.DSN("ledger"), "CHECKPOINT")
	kids := childrenOf(c.Primary.cmd.Process.Pid)
	if len(kids) < 3 {
		t.Fatalf("the primary's postmaster has %d children (%v); a server has at least a checkpointer, a walwriter and a walsender", len(kids), kids)
	}
	if err := c.KillPrimary(); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(kids, c.Primary.cmd.Process.Pid) {
		if st := procState(k); st != 0 && st != 'Z' {
			t.Errorf("process %d of the primary still there (state %c) after KillPrimary", k, st)
		}
	}
	if err := c.Promote(); err != nil {
		t.Fatal(err)
	}
	if dir := query(t, dsn, "SHOW unix_socket_directories"); dir != c.Standby.Dir() {
		t.Fatalf("after the promotion the cluster DSN reached %s, want the standby %s", dir, c.Standby.Dir())
	}
	if got := query(t, dsn, "SELECT coalesce(string_agg(i::text, ',' ORDER BY i), '') FROM x"); got != "1" {
		t.Errorf("promoted standby holds rows %q, want only 1 (row 2 was committed after HoldBack)", got)
	}
	execSQL(t, dsn, "INSERT INTO x VALUES (3)") // it takes writes
}

// TestClusterSyncKeepsWrites checks the synchronous variant: a row whose
// commit returned is on the standby after the primary's death and the
// promotion, found through the multi-host DSN. HoldBack refuses.
func TestClusterSyncKeepsWrites(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, ClusterOptions{Sync: true, Databases: []string{"ledger"}})
	dsn := c.DSN("ledger")
	if v := query(t, dsn, "SHOW synchronous_commit"); v != "on" {
		t.Errorf("synchronous primary has synchronous_commit=%s", v)
	}
	if err := c.HoldBack(); err == nil {
		t.Error("HoldBack on a synchronous cluster did not refuse")
	}
	execSQL(t, dsn, "CREATE TABLE x (i int)")
	for i := 0; i < 50; i++ {
		execSQL(t, dsn, "INSERT INTO x SELECT coalesce(max(i), 0) + 1 FROM x")
	}
	if err := c.KillPrimary(); err != nil {
		t.Fatal(err)
	}
	if err := c.Promote(); err != nil {
		t.Fatal(err)
	}
	if dir := query(t, dsn, "SHOW unix_socket_directories"); dir != c.Standby.Dir() {
		t.Fatalf("after the promotion the cluster DSN reached %s, want the standby %s", dir, c.Standby.Dir())
	}
	if got := query(t, dsn, "SELECT count(*)::text FROM x"); got != "50" {
		t.Errorf("promoted synchronous standby holds %s rows, want all 50 committed", got)
	}
}
