package remote

import (
	"context"
	"errors"

	"github.com/batchd/batchd/internal/payment"
)

// serverError marks a failure of the file server, or of the connection to
// it, as payment.ErrRemote, so that payment.SourceOf files it under "sftp"
// (the daemon's /healthz and logs). Its message is unchanged. Failures of
// the local side (localError: the caller's reader, the local disk) and the
// caller's own cancellation are left unmarked: they are not the server's.
func serverError(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, payment.ErrRemote) {
		return err
	}
	var le *localError
	if errors.As(err, &le) {
		return err
	}
	if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
		return err
	}
	return &remoteErr{err}
}

// remoteErr is an error that Is payment.ErrRemote.
type remoteErr struct{ err error }

func (e *remoteErr) Error() string        { return e.err.Error() }
func (e *remoteErr) Unwrap() error        { return e.err }
func (e *remoteErr) Is(target error) bool { return target == payment.ErrRemote }

// Unreachable reports whether err means that the server cannot be worked
// with at all any more, rather than that it refused one operation: the
// connection was lost and could not be made again, the Client was closed,
// or a reconnect was refused for good (a changed host key, a refused
// login). A job stops at such an error; after a refusal it goes on with
// its other files.
func Unreachable(err error) bool {
	var pe *permanentError
	var hk *HostKeyError
	return errors.Is(err, ErrConnectionLost) || errors.Is(err, ErrClosed) || errors.As(err, &pe) || errors.As(err, &hk)
}
