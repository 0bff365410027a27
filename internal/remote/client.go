// Package remote is batchd's access to a finance team's SFTP server: it
// lists, downloads, uploads and moves files over SFTP (pkg/sftp on
// golang.org/x/crypto/ssh) with the guarantees a payment system needs.
//
//   - The server's host key must be pinned in a known_hosts file. An unknown
//     or changed key is refused; there is no way to turn this off.
//   - Uploads are atomic: a reader of the target directory sees either no
//     file or the whole file, never part of one (on servers that refuse
//     renames: a file is whole once its "<name>.done" marker is there).
//   - Moves never overwrite: a clash gets a numbered name instead.
//   - A dead server is noticed in seconds (keepalives and a per-request
//     deadline), and a lost connection is redialled with backoff. Operations
//     that are safe to repeat are retried once on the new connection.
//
// Paths on the server are absolute and slash-separated.
package remote

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/batchd/batchd/internal/retry"
)

// Defaults for the zero values in Options.
const (
	DefaultDialTimeout = 10 * time.Second
	DefaultKeepalive   = 15 * time.Second
	DefaultOpTimeout   = 60 * time.Second
)

// Options configure Dial.
type Options struct {
	// Address is host:port; the port defaults to 22.
	Address string
	// User is the login name on the server.
	User string
	// IdentityFile is an unencrypted private key (OpenSSH or PEM format),
	// for example a systemd credential. It is read once, by Dial; its
	// contents never appear in errors or logs.
	IdentityFile string
	// KnownHosts is a known_hosts file that must pin the server's host key
	// for Address. It is required, and re-read on every reconnect so that a
	// rotated key can be pinned without restarting batchd.
	KnownHosts string
	// DialTimeout bounds the TCP connect plus the SSH and SFTP handshakes.
	DialTimeout time.Duration
	// Keepalive is how often a keepalive@openssh.com request is sent. If no
	// reply arrives within the same interval, the connection is closed so
	// that every pending operation fails at once instead of hanging.
	Keepalive time.Duration
	// OpTimeout is how long any single wait on the server may last: a whole
	// metadata operation (stat, list, rename), or one stretch of a transfer
	// without progress. A transfer as a whole may take longer. When it
	// expires the connection is closed.
	OpTimeout time.Duration
	// TempUpload is how Upload makes a file appear whole (sftp.temp_upload):
	// TempDot (the default), TempSuffix or TempNone. See Upload.
	TempUpload string
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
	// Presence, shared by the Clients of one process, sets the level of
	// "sftp connected": info on a change, debug otherwise (see Presence).
	// nil logs every connect at info.
	Presence *Presence
}

// FileInfo describes a remote file as the server reports it. SFTP version 3
// gives modification times in whole seconds.
type FileInfo struct {
	Name    string // base name
	Size    int64
	ModTime time.Time
	IsDir   bool
	Mode    fs.FileMode // type and permission bits; a symlink is not followed by List
}

// Regular reports whether the entry is a regular file: not a symbolic
// link, folder, device, socket or FIFO.
func (f FileInfo) Regular() bool { return f.Mode.IsRegular() }

// Kind names what the entry is, for messages: "regular file", "symbolic
// link", "folder", "device", "socket", "named pipe" or "special file".
func (f FileInfo) Kind() string { return kindOf(f.Mode) }

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "folder"
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return "device"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	default:
		return "special file"
	}
}

var (
	// ErrClosed is returned by operations on a Client after Close.
	ErrClosed = errors.New("sftp client closed")
	// ErrConnectionLost wraps failures caused by a dead connection (the
	// server closed it, a keepalive or request went unanswered, the network
	// failed) as opposed to the server refusing an operation.
	ErrConnectionLost = errors.New("sftp connection lost")
	// ErrChanged is returned by Download when the remote file's size or
	// modification time changed while it was read: it was still being
	// written, and the copy cannot be trusted.
	ErrChanged = errors.New("remote file changed while it was read")
	// ErrNotRegular is returned by Download when the path is not a regular
	// file (a symbolic link, a folder, a device, a socket, a FIFO), checked
	// without following links before it is opened and again after it was
	// read: batchd never reads what a link points to.
	ErrNotRegular = errors.New("not a regular file")
)

// Client is a connection to one SFTP server that reconnects by itself. Its
// methods may be called from several goroutines at once.
//
// Cancelling the context of an operation while it waits on the server closes
// the connection, because SFTP cannot cancel a single request; other
// operations in flight then fail over to a new connection (those safe to
// repeat) or fail with ErrConnectionLost.
type Client struct {
	opts   Options
	log    *slog.Logger
	signer ssh.Signer

	dialing chan struct{} // a one-slot lock, held while (re)dialling
	redials retry.Policy  // how a lost connection is redialled

	mu         sync.Mutex
	cur        *conn
	closed     bool
	reconnects int64
}

// Dial connects to the server once, verifying its host key, and returns a
// Client. It does not retry: a failure here is reported to the operator as
// is. Host key problems are returned as *HostKeyError. Every error but
// ctx's own wraps payment.ErrRemote.
func Dial(ctx context.Context, opts Options) (*Client, error) {
	c, err := dialClient(ctx, opts)
	return c, serverError(ctx, err)
}

func dialClient(ctx context.Context, opts Options) (*Client, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	signer, err := loadIdentity(opts.IdentityFile)
	if err != nil {
		return nil, fmt.Errorf("sftp %s: %w", opts.Address, err)
	}
	c := &Client{
		opts:    opts,
		log:     opts.Logger.With("sftp", opts.Address),
		signer:  signer,
		dialing: make(chan struct{}, 1),
		redials: redialPolicy,
	}
	cn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	c.cur = cn
	return c, nil
}

func (o Options) normalize() (Options, error) {
	if o.Address == "" || o.User == "" || o.IdentityFile == "" {
		return o, errors.New("sftp: address, user and identity file are required")
	}
	if o.KnownHosts == "" {
		return o, fmt.Errorf("sftp %s: a known_hosts file is required; batchd never connects to a server whose host key is not pinned", o.Address)
	}
	if _, _, err := net.SplitHostPort(o.Address); err != nil {
		o.Address = net.JoinHostPort(o.Address, "22")
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.Keepalive <= 0 {
		o.Keepalive = DefaultKeepalive
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = DefaultOpTimeout
	}
	switch o.TempUpload {
	case "":
		o.TempUpload = TempDot
	case TempDot, TempSuffix, TempNone:
	default:
		return o, fmt.Errorf("sftp %s: unknown temporary upload mode %q (want %s, %s or %s)", o.Address, o.TempUpload, TempDot, TempSuffix, TempNone)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// Close closes the connection. Operations in flight fail; later ones return
// ErrClosed. Close is idempotent.
func (c *Client) Close() error {
	c.mu.Lock()
	cn := c.cur
	c.cur, c.closed = nil, true
	c.mu.Unlock()
	if cn != nil {
		cn.kill(ErrClosed)
	}
	return nil
}

// Reconnects is how many times the Client has dialled again after losing its
// connection, for metrics and tests.
func (c *Client) Reconnects() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reconnects
}
