package pgtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func query(t *testing.T, dsn, sql string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close(ctx)
	var s string
	if err := c.QueryRow(ctx, sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

func TestStartServesAndStops(t *testing.T) {
	var dir string
	t.Run("server", func(t *testing.T) {
		begin := time.Now()
		dsn := Start(t)
		t.Logf("started in %s", time.Since(begin))
		if v := query(t, dsn, "SHOW server_version_num"); v < "150000" {
			t.Errorf("server_version_num = %s, want PostgreSQL 15 or later", v)
		}
		if v := query(t, dsn, "SHOW listen_addresses"); v != "" {
			t.Errorf("listen_addresses = %q, want none (socket only)", v)
		}
		dir = query(t, dsn, "SHOW unix_socket_directories")
	})
	// Cleanup stopped the server and removed its directory.
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("server directory %s still there after cleanup: %v", dir, err)
	}
}

func TestNewDatabaseIsFreshAndPrivate(t *testing.T) {
	a, b := NewDatabase(t), NewDatabase(t)
	if a == b {
		t.Fatalf("two tests got one database: %s", a)
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE TABLE x (i int)"); err != nil {
		t.Fatal(err)
	}
	if n := query(t, b, "SELECT count(*)::text FROM pg_tables WHERE tablename = 'x'"); n != "0" {
		t.Errorf("table made in one database seen in another")
	}
}

func TestNewDatabaseInParallel(t *testing.T) {
	for i := 0; i < 8; i++ {
		t.Run("db", func(t *testing.T) {
			t.Parallel()
			if v := query(t, NewDatabase(t), "SELECT current_database()::text"); v == "" {
				t.Error("no database")
			}
		})
	}
}
