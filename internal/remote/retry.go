package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/pkg/sftp"

	"github.com/batchd/batchd/internal/logattr"
	"github.com/batchd/batchd/internal/retry"
)

// Reconnect policy: the first redial is immediate (a server restart or a
// dropped NAT mapping usually recovers at once), later ones back off
// exponentially with full jitter. The attempts are bounded so that a
// scheduled job fails and tries again at its next run instead of hanging.
const (
	maxRedials   = 5
	backoffBase  = 250 * time.Millisecond
	backoffLimit = 5 * time.Second
)

// redialPolicy is the Client's reconnect policy (tests shorten it).
var redialPolicy = retry.Policy{Base: backoffBase, Max: backoffLimit, MaxAttempts: maxRedials}

// call is one run of an operation on one connection.
type call struct {
	cn      *conn
	wd      *watchdog
	retried bool // this is the second run, on a new connection
}

// do runs op on a live connection, dialling one if needed. If the connection
// dies during op and again is set, it reconnects and runs op once more,
// with retried set so that op can first check what the lost run achieved.
// (This is a single failover, not a backoff loop: the waiting, if any, is
// redial's.)
//
// Every error it returns from the server or the connection wraps
// payment.ErrRemote (see serverError).
func (c *Client) do(ctx context.Context, again bool, op func(*call) error) error {
	return serverError(ctx, c.doOnce(ctx, again, op))
}

func (c *Client) doOnce(ctx context.Context, again bool, op func(*call) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	err = c.run(ctx, &call{cn: cn}, op)
	if err == nil || ctx.Err() != nil || !lost(cn, err) {
		return err
	}
	if c.isClosed() {
		return ErrClosed
	}
	err = cn.lostError(err)
	if !again {
		return err
	}
	c.log.Warn("sftp connection lost; reconnecting to retry", "error", err)
	cn, rerr := c.reconnect(ctx)
	if rerr != nil {
		return fmt.Errorf("%w; reconnect: %w", err, rerr)
	}
	err = c.run(ctx, &call{cn: cn, retried: true}, op)
	if err != nil && ctx.Err() == nil && lost(cn, err) {
		return cn.lostError(err)
	}
	return err
}

// run executes op under the per-request deadline and ctx. Either one
// expiring closes the connection, which is the only way to stop waiting for
// an SFTP request.
func (c *Client) run(ctx context.Context, k *call, op func(*call) error) error {
	d := c.opts.OpTimeout
	k.wd = newWatchdog(d, func() { k.cn.kill(fmt.Errorf("no reply from the server within %s", d)) })
	stop := context.AfterFunc(ctx, func() { k.cn.kill(fmt.Errorf("request abandoned: %w", context.Cause(ctx))) })
	err := op(k)
	k.wd.stop()
	stop()
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// lost reports whether err came from a dead connection rather than from the
// server's answer or from the local side. A connection that produced a
// transport error is killed so that it is not used again.
func lost(cn *conn, err error) bool {
	if !cn.alive() {
		return true
	}
	var le *localError
	if errors.As(err, &le) || !transportError(err) {
		return false
	}
	cn.kill(err)
	return true
}

// transportError recognises the errors pkg/sftp and x/crypto/ssh return when
// the connection under a request breaks. A status the server sent is never
// one of them: SSH_FX_EOF cannot answer the requests batchd makes outside a
// read loop, which consumes it.
func transportError(err error) bool {
	for _, target := range []error{
		sftp.ErrSSHFxConnectionLost, io.EOF, io.ErrUnexpectedEOF, io.ErrClosedPipe,
		net.ErrClosed, syscall.ECONNRESET, syscall.EPIPE, ErrConnectionLost,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// connect returns the live connection, redialling if it is dead. A failed
// redial is reported as ErrConnectionLost, unless retrying cannot fix it
// (host key, login).
func (c *Client) connect(ctx context.Context) (*conn, error) {
	cn, err := c.reconnect(ctx)
	var pe *permanentError
	if err != nil && !errors.As(err, &pe) && !errors.Is(err, ErrClosed) {
		return nil, fmt.Errorf("%w: reconnect: %w", ErrConnectionLost, err)
	}
	return cn, err
}

// reconnect is connect without the wrapping. One caller redials at a time;
// the others wait for its result.
func (c *Client) reconnect(ctx context.Context) (*conn, error) {
	if cn, err := c.live(); cn != nil || err != nil {
		return cn, err
	}
	select {
	case c.dialing <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.dialing }()
	if cn, err := c.live(); cn != nil || err != nil {
		return cn, err
	}
	cn, err := c.redial(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		cn.kill(ErrClosed)
		return nil, ErrClosed
	}
	c.cur = cn
	c.reconnects++
	return cn, nil
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// live returns the current connection if it is alive, or ErrClosed.
func (c *Client) live() (*conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if c.cur != nil && c.cur.alive() {
		return c.cur, nil
	}
	return nil, nil
}

// redial dials until it succeeds, a failure is permanent (host key, login),
// ctx ends, or c.redials.MaxAttempts attempts fail.
func (c *Client) redial(ctx context.Context) (*conn, error) {
	var (
		cn    *conn
		tries int
	)
	c.opts.Presence.failed() // the connection was lost: its successor is news
	p := c.redials
	p.Notify = func(err error, wait time.Duration) {
		c.log.Warn("sftp reconnect failed", "attempt", tries, logattr.Duration("retry_in", wait), "error", err)
	}
	err := retry.Do(ctx, p, func(ctx context.Context) error {
		tries++
		var err error
		cn, err = c.dial(ctx)
		var pe *permanentError
		if errors.As(err, &pe) {
			return retry.Permanent(err)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	c.log.Info("sftp reconnected", "attempt", tries)
	return cn, nil
}

// watchdog kills the connection if the server keeps an operation waiting
// longer than the deadline. Transfers pause it while the local side works,
// so that only waiting on the server counts.
type watchdog struct {
	t *time.Timer
	d time.Duration
}

func newWatchdog(d time.Duration, expire func()) *watchdog {
	return &watchdog{t: time.AfterFunc(d, expire), d: d}
}

func (w *watchdog) pause()  { w.t.Stop() }
func (w *watchdog) resume() { w.t.Reset(w.d) }
func (w *watchdog) stop()   { w.t.Stop() }

// paused runs a read or write of the local side (the caller's reader, the
// local disk) with the watchdog paused, so that a slow local side is not
// taken for a dead server.
func (w *watchdog) paused(op func() (int, error)) (int, error) {
	w.pause()
	defer w.resume()
	return op()
}

// localError marks failures of the local side of a transfer (the caller's
// reader, the local disk) so that they are not taken for a lost connection.
type localError struct{ err error }

func (e *localError) Error() string { return e.err.Error() }
func (e *localError) Unwrap() error { return e.err }

func asLocal(err error) error {
	if err == nil {
		return nil
	}
	return &localError{err}
}
