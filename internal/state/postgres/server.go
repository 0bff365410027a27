package postgres

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
)

// servers names the server a connection actually reached. With a
// multi-host DSN (host=db-a,db-b target_session_attrs=read-write) the
// parsed config's Host is only the first host, while pgconn connects to
// whichever answers as asked: after a failover, a message naming the
// first host names the server that is gone. pgconn keeps the host it
// dialled to itself, so servers learns which DSN host each address came
// from by wrapping the config's LookupFunc, and reads the address from
// the connection.
//
// Wiring (Store): configure(cfg.ConnConfig) in Open; name a
// transaction's server by nameOf(pg.Conn().PgConn()).
type servers struct {
	db     string
	mu     sync.Mutex
	byAddr map[string]string // an address as looked up → the DSN's host name
}

// newServers returns the servers of a config parsed from a DSN, with its
// LookupFunc wrapped; c must not be connecting yet.
func newServers(c *pgconn.Config) *servers {
	s := &servers{db: c.Database, byAddr: map[string]string{}}
	lookup := c.LookupFunc
	c.LookupFunc = func(ctx context.Context, host string) ([]string, error) {
		addrs, err := lookup(ctx, host)
		s.mu.Lock()
		for _, a := range addrs {
			if ip, _, err := net.SplitHostPort(a); err == nil {
				a = ip
			}
			s.byAddr[a] = host
		}
		s.mu.Unlock()
		return addrs, err
	}
	return s
}

// nameOf names the server c is connected to, as "postgres host:port/db"
// with the host as the DSN spells it (when pgconn looked it up).
func (s *servers) nameOf(c *pgconn.PgConn) string {
	return s.name(c.Conn().RemoteAddr())
}

func (s *servers) name(a net.Addr) string {
	host, port := a.String(), ""
	switch a.Network() {
	case "unix":
		// A socket path is dir/.s.PGSQL.port; the DSN names dir and port.
		dir, file := filepath.Split(host)
		host, port = filepath.Clean(dir), strings.TrimPrefix(file, ".s.PGSQL.")
	default:
		if h, p, err := net.SplitHostPort(host); err == nil {
			host, port = h, p
		}
		s.mu.Lock()
		if named, ok := s.byAddr[host]; ok {
			host = named
		}
		s.mu.Unlock()
	}
	return fmt.Sprintf("postgres %s:%s/%s", host, port, s.db)
}
