package sftpd

import (
	"encoding/binary"
	"net"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// handshakeTimeout bounds how long a client may take to authenticate, so a
// stalled peer cannot hold a goroutine forever.
const handshakeTimeout = 10 * time.Second

// serveConn runs the SSH protocol on c until the client leaves or the
// server closes c.
func (s *Server) serveConn(c net.Conn) {
	defer s.untrack(c)
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	sc, chans, reqs, err := ssh.NewServerConn(c, s.config)
	if err != nil {
		return
	}
	defer sc.Close()
	_ = c.SetDeadline(time.Time{})
	// Global requests include keepalive@openssh.com; answering them (with
	// "no") is what lets a client tell a live server from a dead one.
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ssh.DiscardRequests(reqs)
	}()
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions are served")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		s.wg.Add(1)
		go s.serveSession(ch, creqs, func() { c.Close() })
	}
}

// serveSession grants the "sftp" subsystem and refuses everything else
// (shells, exec, port forwarding): the server exists only for file transfer.
func (s *Server) serveSession(ch ssh.Channel, reqs <-chan *ssh.Request, drop func()) {
	defer s.wg.Done()
	defer ch.Close()
	started := false
	for req := range reqs {
		ok := !started && req.Type == "subsystem" && subsystem(req.Payload) == "sftp"
		if req.WantReply {
			_ = req.Reply(ok, nil)
		}
		if ok {
			started = true
			s.wg.Add(1)
			go s.serveSFTP(ch, drop)
		}
	}
}

// serveSFTP serves the sftp subsystem through the hooks' filter (see
// Hooks); drop closes the client's connection.
func (s *Server) serveSFTP(ch ssh.Channel, drop func()) {
	defer s.wg.Done()
	defer ch.Close()
	end := s.newFilter(ch, drop)
	srv, err := sftp.NewServer(end, sftp.WithServerWorkingDirectory(s.Root))
	if err != nil {
		end.Close()
		return
	}
	_ = srv.Serve()
	_ = srv.Close()
}

// subsystem decodes the subsystem request's payload, an SSH string.
func subsystem(payload []byte) string {
	if len(payload) < 4 {
		return ""
	}
	n := binary.BigEndian.Uint32(payload)
	if uint64(n) > uint64(len(payload)-4) {
		return ""
	}
	return string(payload[4 : 4+n])
}
