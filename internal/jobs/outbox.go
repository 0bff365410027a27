package jobs

import (
	"context"
	"io"
	"sync"

	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/report"
)

// lazyOutbox connects to the SFTP server at its first upload, not before.
// A report is written locally before it is uploaded (report.Destination),
// so a run with no report due never connects, and an SFTP outage fails
// only the runs that have something to deliver: before, a submit with
// nothing pending went red with the server, and fed
// BatchdSubmitNotSucceeding ("payments are not being sent"). A report
// that cannot be delivered stays written locally, its batch unstamped, and
// the next run delivers it. A failed connect is kept for the rest of the
// run: later uploads fail at once instead of waiting out the dial timeout
// each.
type lazyOutbox struct {
	dial func(context.Context) (*remote.Client, error)

	mu  sync.Mutex
	rem *remote.Client
	err error
}

// Upload connects if this is the first upload, then uploads.
func (o *lazyOutbox) Upload(ctx context.Context, dir, name string, r io.Reader) error {
	rem, err := o.connect(ctx)
	if err != nil {
		return err
	}
	return rem.Upload(ctx, dir, name, r)
}

func (o *lazyOutbox) connect(ctx context.Context) (*remote.Client, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.rem == nil && o.err == nil {
		o.rem, o.err = o.dial(ctx)
	}
	return o.rem, o.err
}

// Close closes the connection, if one was made.
func (o *lazyOutbox) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.rem != nil {
		o.rem.Close()
	}
}

// deliver runs fn with the outbox as its destination when SFTP is
// configured (connected at fn's first upload: lazyOutbox), or with local
// copies only.
func (e *Env) deliver(ctx context.Context, fn func(context.Context, report.Destination) ([]string, error)) ([]string, error) {
	if e.Cfg.SFTP.Address == "" {
		return fn(ctx, report.Destination{})
	}
	out := &lazyOutbox{dial: e.Dial}
	defer out.Close()
	return fn(ctx, report.Destination{Outbox: out, Dir: e.Cfg.SFTP.Outbox})
}
