package apiwire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
)

// sendTracker answers one question after a failed request: could the
// service have received the whole request? A create that could have is
// Ambiguous; one that could not is safe to send again.
//
// Two signals are combined, and either one means "maybe sent":
//   - httptrace's WroteRequest without an error: the whole request went to
//     the connection;
//   - the body was read to its end. The transport can only send bytes it
//     has read, so a body never read to the end cannot have arrived whole
//     (the Content-Length tells the server it is incomplete).
//
// The second signal covers a gap in the first: after a cancellation, the
// HTTP/2 transport may return before its writer goroutine reports
// WroteRequest, but it waits for the body to be closed, and the body
// refuses to be read once closed. HTTP/1's transport waits for its write
// loop before returning an error, so there WroteRequest alone is reliable.
// Both signals err towards "maybe sent": a transport that read the body
// and then failed to write it yields a needless Ambiguous (one lookup by
// the caller), never a false Retryable (a possible duplicate payment).
type sendTracker struct {
	wrote    atomic.Bool
	consumed atomic.Bool
}

func (t *sendTracker) mayHaveBeenSent() bool {
	return t.wrote.Load() || t.consumed.Load()
}

// withSendTrace adds t's WroteRequest hook to ctx, composed with any trace
// the caller already set.
func withSendTrace(ctx context.Context, t *sendTracker) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				t.wrote.Store(true)
			}
		},
	})
}

// attach sets b as req's body, with a known length and a GetBody that the
// transport may use to resend it when nothing was written.
func (t *sendTracker) attach(req *http.Request, b []byte) {
	req.ContentLength = int64(len(b))
	req.GetBody = func() (io.ReadCloser, error) {
		return &trackedBody{r: bytes.NewReader(b), t: t}, nil
	}
	req.Body, _ = req.GetBody()
}

var errBodyClosed = errors.New("request body read after close")

// trackedBody is a request body that records when its last byte is handed
// to the transport.
type trackedBody struct {
	mu     sync.Mutex
	r      *bytes.Reader
	t      *sendTracker
	closed bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, errBodyClosed
	}
	n, err := b.r.Read(p)
	if b.r.Len() == 0 {
		// Recorded before the bytes are returned, so before they can be
		// written anywhere.
		b.t.consumed.Store(true)
	}
	return n, err
}

func (b *trackedBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return nil
}
