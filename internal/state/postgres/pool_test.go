package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/pgtest"
)

// The pool is DefaultMaxConns, or Options.MaxConns, unless the DSN names
// pool_max_conns: an operator's cap (a managed server's connection limit)
// is never raised.
func TestPoolSize(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	capped := dsn + " pool_max_conns=3"
	if strings.Contains(dsn, "://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		capped = dsn + sep + "pool_max_conns=3"
	}
	for _, c := range []struct {
		name string
		dsn  string
		opt  int32
		want int32
	}{
		{"default", dsn, 0, DefaultMaxConns},
		{"options", dsn, 5, 5},
		{"dsn", capped, 5, 3},
	} {
		s, err := Open(context.Background(), c.dsn, Options{MaxConns: c.opt, Projection: NoTables})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := s.pool.Config().MaxConns
		s.Close()
		if got != c.want {
			t.Errorf("%s: pool of %d, want %d", c.name, got, c.want)
		}
	}
}
