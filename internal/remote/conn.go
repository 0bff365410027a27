package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// conn is one SSH connection with its SFTP session. Once dead it stays dead;
// the Client replaces it.
type conn struct {
	ssh         *ssh.Client
	sftp        *sftp.Client
	posixRename bool // posix-rename@openssh.com: rename that replaces the target
	fsync       bool // fsync@openssh.com

	once  sync.Once
	done  chan struct{} // closed by kill
	cause error         // why it died; written before done is closed
}

func (cn *conn) alive() bool {
	select {
	case <-cn.done:
		return false
	default:
		return true
	}
}

// kill closes the connection, recording the first reason given. Closing the
// TCP connection makes every pending request fail at once.
func (cn *conn) kill(cause error) {
	cn.once.Do(func() {
		cn.cause = cause
		close(cn.done)
		cn.ssh.Close()
		cn.sftp.Close()
	})
}

// lostError describes an operation's failure on a dead connection.
func (cn *conn) lostError(err error) error {
	cause := err
	if !cn.alive() && cn.cause != nil {
		cause = cn.cause
	}
	return fmt.Errorf("%w: %v", ErrConnectionLost, cause)
}

// watch kills the conn when the server ends the SSH connection or the SFTP
// session, so that the next operation redials instead of failing.
func (cn *conn) watch() {
	go func() {
		err := cn.ssh.Wait()
		cn.kill(fmt.Errorf("the server closed the connection (%v)", err))
	}()
	go func() {
		err := cn.sftp.Wait()
		cn.kill(fmt.Errorf("the sftp session ended (%v)", err))
	}()
}

// keepalive asks for a reply every interval and kills the conn when one does
// not arrive within the interval. OpenSSH answers keepalive@openssh.com with
// a failure message, which counts as a reply.
func (cn *conn) keepalive(interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-cn.done:
			return
		case <-tick.C:
		}
		reply := make(chan error, 1)
		go func() {
			_, _, err := cn.ssh.SendRequest("keepalive@openssh.com", true, nil)
			reply <- err
		}()
		wait := time.NewTimer(interval)
		select {
		case err := <-reply:
			wait.Stop()
			if err != nil {
				cn.kill(fmt.Errorf("keepalive: %w", err))
				return
			}
		case <-wait.C:
			cn.kill(fmt.Errorf("no keepalive reply within %s", interval))
			return
		case <-cn.done:
			wait.Stop()
			return
		}
	}
}

// dial makes one connection attempt with the Client's settings.
func (c *Client) dial(ctx context.Context) (_ *conn, err error) {
	defer func() {
		if err != nil {
			c.opts.Presence.failed()
		}
	}()
	hk, err := loadHostKeys(c.opts.KnownHosts, c.opts.Address)
	if err != nil {
		return nil, permanent(err)
	}
	cfg := &ssh.ClientConfig{
		User:              c.opts.User,
		Auth:              []ssh.AuthMethod{ssh.PublicKeys(c.signer)},
		HostKeyCallback:   hk.callback,
		HostKeyAlgorithms: hk.algorithms,
		ClientVersion:     "SSH-2.0-batchd",
	}
	cn, err := open(ctx, c.opts.Address, cfg, c.opts.DialTimeout)
	if err != nil {
		return nil, c.dialError(ctx, err, hk)
	}
	cn.watch()
	go cn.keepalive(c.opts.Keepalive)
	fp := ""
	if p := hk.seen.Load(); p != nil {
		fp = *p
	}
	c.log.Log(ctx, c.opts.Presence.connected(), "sftp connected", "user", c.opts.User, "host_key", fp,
		"posix_rename", cn.posixRename, "fsync", cn.fsync)
	return cn, nil
}

// open connects and runs the SSH and SFTP handshakes, all within timeout and
// ctx: the deadline on the TCP connection bounds every read and write the
// handshakes make.
func open(ctx context.Context, addr string, cfg *ssh.ClientConfig, timeout time.Duration) (*conn, error) {
	d := net.Dialer{Timeout: timeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	_ = nc.SetDeadline(time.Now().Add(timeout))
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*conn, error) {
		stop()
		nc.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	sc, chans, reqs, err := ssh.NewClientConn(nc, addr, cfg)
	if err != nil {
		return fail(err)
	}
	client := ssh.NewClient(sc, chans, reqs)
	sftpc, err := sftp.NewClient(client)
	if err != nil {
		return fail(fmt.Errorf("start sftp session: %w", err))
	}
	if !stop() {
		sftpc.Close()
		return fail(ctx.Err())
	}
	_ = nc.SetDeadline(time.Time{})
	cn := &conn{ssh: client, sftp: sftpc, done: make(chan struct{})}
	_, cn.posixRename = sftpc.HasExtension("posix-rename@openssh.com")
	v, ok := sftpc.HasExtension("fsync@openssh.com")
	cn.fsync = ok && v == "1"
	return cn, nil
}

// dialError turns a failed dial into an error an operator can act on, and
// marks the ones that retrying cannot fix.
func (c *Client) dialError(ctx context.Context, err error, hk *hostKeys) error {
	addr := c.opts.Address
	var hke *HostKeyError
	msg := err.Error()
	switch {
	case errors.As(err, &hke):
		return permanent(hke)
	case ctx.Err() != nil:
		return fmt.Errorf("sftp %s: connect: %w", addr, ctx.Err())
	case strings.Contains(msg, "unable to authenticate"):
		return permanent(fmt.Errorf("sftp %s: the server refused user %q with the key in %s (%s); check the user's authorized_keys",
			addr, c.opts.User, c.opts.IdentityFile, ssh.FingerprintSHA256(c.signer.PublicKey())))
	case strings.Contains(msg, "no common algorithm for host key"):
		return permanent(fmt.Errorf("sftp %s: the server has no host key of the types pinned in %s (%s); refusing to connect",
			addr, c.opts.KnownHosts, strings.Join(hk.algorithms, ", ")))
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("sftp %s: connect: no answer within %s", addr, c.opts.DialTimeout)
	}
	return fmt.Errorf("sftp %s: connect: %w", addr, err)
}

// permanentError marks dial failures that retrying cannot fix.
type permanentError struct{ err error }

func permanent(err error) error         { return &permanentError{err} }
func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }
