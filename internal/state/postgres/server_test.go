package postgres

import (
	"net/url"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state/kv"
)

// TestNameIsTheServerReached: with a multi-host DSN whose first host does
// not answer (a primary that failed over), messages name the server the
// ledger is on, not the first host; before any transaction, every host.
func TestNameIsTheServerReached(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	live := q.Get("host")
	dead := t.TempDir() // no server listens here
	q.Set("host", dead+","+live)
	q.Set("port", "5432,"+q.Get("port"))
	u.RawQuery = q.Encode()
	s := open(t, u.String())
	db := strings.TrimPrefix(u.Path, "/")
	if got, want := s.name, "postgres "+dead+":5432,"+live+":"+q.Get("port")[len("5432,"):]+"/"+db; got != want {
		t.Errorf("the DSN's name = %q, want %q (every host)", got, want)
	}
	if err := s.UpdateUnfenced(func(tx kv.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := s.Name(); !strings.Contains(got, live) || strings.Contains(got, dead) {
		t.Errorf("Name after a transaction = %q, want the server reached (%s), not the first host", got, live)
	}
}

func TestServerAddr(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/run/postgresql/.s.PGSQL.5433": "/run/postgresql:5433",
		"10.0.0.5:5432":                 "10.0.0.5:5432",
		"/tmp/.s.PGSQL.x":               "/tmp/.s.PGSQL.x",
	} {
		if got := serverAddr(in); got != want {
			t.Errorf("serverAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
