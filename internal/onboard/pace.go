package onboard

import (
	"context"
	"errors"
	"sync"

	"github.com/batchd/batchd/internal/inflight"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/rowrun"
	"github.com/batchd/batchd/internal/sendgate"
)

// paced is one send of a row under its slot of the in-flight limit. A
// send makes one to four requests (the customer's sources, the customer,
// the source, its micro-deposits); each marks its wait on the rate
// limiter, which is the rate budget's and not the service's latency, and
// what the service did with it, which the slot reports when released.
// The slot's latency is the time per request (a lookup by email that
// walks several pages counts as one, a little long).
type paced struct {
	slot *inflight.Slot

	mu       sync.Mutex
	answered bool // a request was answered (a success or a refusal)
	dropped  bool // a request was not acted on or its answer was lost
}

type pacedKey struct{}

// withPace returns ctx carrying p for the requests of the send.
func withPace(ctx context.Context, p *paced) context.Context {
	return context.WithValue(ctx, pacedKey{}, p)
}

// pace readies one request of ctx's send: the slot counts the wait before
// the rate limiter lets it go (the send gate, which runs then, ends it)
// as no latency, and done notes the request's outcome. Without a send
// under way it changes nothing.
func pace(ctx context.Context) (context.Context, func(error)) {
	p, _ := ctx.Value(pacedKey{}).(*paced)
	if p == nil {
		return ctx, func(error) {}
	}
	p.slot.Queued()
	inner := ctx
	return sendgate.With(ctx, func() error {
		p.slot.Sent()
		return sendgate.Check(inner)
	}), p.note
}

// note records what the service did with one request.
func (p *paced) note(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err == nil:
		p.answered = true
	case errors.Is(err, rowrun.ErrSendByPassed):
		// Never left: it tells nothing of the service.
	case payment.FailureOf(err) == payment.FailRefused:
		p.answered = true
	case payment.FailureOf(err) == payment.FailKeyRefused:
	default:
		p.dropped = true
	}
}

// outcome is what the send tells the in-flight limit: a drop if any
// request was dropped, an answer if one was answered, else nothing.
func (p *paced) outcome() inflight.Outcome {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.dropped:
		return inflight.Dropped
	case p.answered:
		return inflight.Answered
	}
	return inflight.Ignored
}
