package postgres

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Naming the server in messages. A multi-host DSN (host=a,b with
// target_session_attrs=read-write) follows a promotion to another host,
// so the configured first host says nothing of where the ledger is: the
// Store names the server its last transaction reached, and, before any,
// every host the DSN lists.

// describe names the database the configuration points at, without user
// or password: "postgres host:port/dbname", or with a multi-host DSN
// "postgres a:5432,b:5432/dbname".
func describe(c pgconn.Config) string {
	hosts := []string{hostPort(c.Host, c.Port)}
	for _, f := range c.Fallbacks {
		hosts = append(hosts, hostPort(f.Host, f.Port))
	}
	return fmt.Sprintf("postgres %s/%s", strings.Join(hosts, ","), c.Database)
}

func hostPort(host string, port uint16) string { return fmt.Sprintf("%s:%d", host, port) }

// noteServer remembers the server that pg's connection reached, for Name.
func (s *Store) noteServer(pg *pgx.Conn) {
	conn := pg.PgConn().Conn()
	if conn == nil {
		return
	}
	addr := conn.RemoteAddr().String()
	if cur := s.server.Load(); cur != nil && cur.addr == addr {
		return
	}
	s.server.Store(&server{addr: addr, name: "postgres " + serverAddr(addr) + "/" + s.database})
}

// server is the server last reached: its address as the connection gives
// it, and its name for messages.
type server struct{ addr, name string }

// serverAddr turns a unix socket's path (/run/postgresql/.s.PGSQL.5432)
// into the directory and port a DSN names it by (/run/postgresql:5432);
// a TCP address is already host:port.
func serverAddr(addr string) string {
	i := strings.LastIndex(addr, "/.s.PGSQL.")
	if i < 0 {
		return addr
	}
	if _, err := strconv.Atoi(addr[i+len("/.s.PGSQL."):]); err != nil {
		return addr
	}
	return addr[:i] + ":" + addr[i+len("/.s.PGSQL."):]
}
