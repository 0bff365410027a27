package pgtest

import (
	"fmt"
	"net"
	"net/url"
	"os"
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
	s, bin, cred, err := prepare(append([]string{"listen_addresses=127.0.0.1"}, settings...))
	if err != nil {
		return nil, err
	}
	s.port = port
	if err := s.initdb(bin, cred); err != nil {
		os.RemoveAll(s.dir)
		return nil, err
	}
	if err := s.start(bin, cred); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// TCPAddr is the server's TCP address (NewTCPServer).
func (s *Server) TCPAddr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// TCPDSN is the DSN of database db over TCP at addr: the server's own
// TCPAddr, or a proxy's in front of it.
func TCPDSN(addr, db string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", addr, url.PathEscape(db))
}
