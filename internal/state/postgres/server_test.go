package postgres

import (
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/batchd/batchd/internal/pgtest"
)

// TestServerNameIsTheConnectedOne: a DSN whose first host is down names,
// once connected, the host that answered, not the first.
func TestServerNameIsTheConnectedOne(t *testing.T) {
	live, err := pgconn.ParseConfig(pgtest.NewDatabase(t))
	must(t, err)
	dead := t.TempDir() // a socket directory no server listens in
	c, err := pgconn.ParseConfig("host=" + dead + "," + live.Host + " port=5432," + strconv.Itoa(int(live.Port)) +
		" user=" + live.User + " dbname=" + live.Database + " sslmode=disable")
	must(t, err)
	s := newServers(c)
	pc, err := pgconn.ConnectConfig(context.Background(), c)
	must(t, err)
	defer pc.Close(context.Background())
	want := describe(pgconn.Config{Host: live.Host, Port: live.Port, Database: live.Database})
	if got := s.nameOf(pc); got != want {
		t.Errorf("connected server named %q, want %q (the first host is %s)", got, want, dead)
	}
	if first := describe(*c); first == want {
		t.Fatalf("the DSN's first host %q is the live one: the test proves nothing", first)
	}
}

// TestServerNameFromLookup: a TCP peer is named by the DSN's host name
// it was looked up from, or by its address when none was.
func TestServerNameFromLookup(t *testing.T) {
	c, err := pgconn.ParseConfig("host=db-a,db-b port=5432,6543 dbname=ledger")
	must(t, err)
	c.LookupFunc = func(_ context.Context, host string) ([]string, error) {
		return map[string][]string{"db-a": {"10.0.0.1"}, "db-b": {"10.0.0.2", "[fd00::2]:6543"}}[host], nil
	}
	s := newServers(c)
	for _, h := range []string{"db-a", "db-b"} {
		if _, err := c.LookupFunc(context.Background(), h); err != nil {
			t.Fatal(err)
		}
	}
	for addr, want := range map[net.Addr]string{
		&net.TCPAddr{IP: net.ParseIP("10.0.0.2"), Port: 6543}:     "postgres db-b:6543/ledger",
		&net.TCPAddr{IP: net.ParseIP("fd00::2"), Port: 6543}:      "postgres db-b:6543/ledger",
		&net.TCPAddr{IP: net.ParseIP("192.0.2.9"), Port: 5432}:    "postgres 192.0.2.9:5432/ledger",
		&net.UnixAddr{Name: "/run/pg/.s.PGSQL.5433", Net: "unix"}: "postgres /run/pg:5433/ledger",
	} {
		if got := s.name(addr); got != want {
			t.Errorf("%v named %q, want %q", addr, got, want)
		}
	}
}
