package ach

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
// service have received the whole request? A call with an effect that
// could have is Ambiguous; one that could not is safe to send again.
//
// Either signal means "maybe sent": httptrace's WroteRequest without an
// error, or the body read to its end (the transport can only send bytes
// it has read; HTTP/2 may return before reporting WroteRequest). Both err
// towards "maybe sent": a needless Ambiguous costs one lookup, a false
// Retryable could cost a duplicate debit. This is the same reasoning as
// internal/echeck's tracker, in a minimal local copy.
type sendTracker struct {
	wrote    atomic.Bool
	consumed atomic.Bool
}

func (t *sendTracker) mayHaveBeenSent() bool { return t.wrote.Load() || t.consumed.Load() }

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

// trackedBody records when its last byte is handed to the transport.
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
		b.t.consumed.Store(true) // before the bytes can be written anywhere
	}
	return n, err
}

func (b *trackedBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return nil
}
