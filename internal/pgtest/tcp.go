package pgtest

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
)

// NewTCPServer starts a server that also listens on TCP at 127.0.0.1, on
// a free port, with more settings (-c name=value; "fsync=on" and
// "synchronous_commit=on" give PostgreSQL's durable defaults back): for
// measuring batchd against a database reached over the network, through
// internal/delayproxy. TCPDSN names its databases over TCP.
func NewTCPServer(settings ...string) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return startServer(append([]string{"listen_addresses=127.0.0.1"}, settings...), port)
}

// TCPAddr is the server's TCP address (NewTCPServer).
func (s *Server) TCPAddr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// TCPDSN is the DSN of database db over TCP at addr: the server's own
// TCPAddr, or a proxy's in front of it.
func TCPDSN(addr, db string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", addr, url.PathEscape(db))
}
