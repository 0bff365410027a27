package rowrun

import (
	"context"
	"errors"
	"time"

	"github.com/batchd/batchd/internal/sendgate"
)

// On a ledger shared under a leader lease, a row's send records a send-by
// deadline: its create must leave before it, checked at the last moment
// (internal/sendgate, after the rate limiter), and a new leader looks a
// row in doubt up only after it plus resolve.DefaultSendMargin. A leader
// that lost its lease while paused therefore never creates what its
// successor has already looked for.

// ErrSendByPassed is the gate's refusal of a create whose send-by deadline
// passed while it waited for the rate limiter.
var ErrSendByPassed = errors.New("send-by deadline passed")

// DropReason is the note a row dropped at its send-by deadline carries in
// its history and Error.
const DropReason = "send-by deadline passed before the request left: another instance may lead; looked up after the deadline"

// Passed reports whether a create with deadline sendBy may no longer leave
// at now. A zero sendBy (a ledger that fences nothing) never passes.
func Passed(sendBy, now time.Time) bool {
	return !sendBy.IsZero() && now.After(sendBy)
}

// Gate returns ctx, not cancelled with the run (a cancelled create is an
// ambiguous one), carrying the send-by check for the HTTP layer: the
// request is not written when now() is past sendBy, and the client's error
// wraps ErrSendByPassed. leaving, when not nil, is told first, once the
// rate limiter let the request go.
func Gate(ctx context.Context, sendBy time.Time, now func() time.Time, leaving func()) context.Context {
	return sendgate.With(context.WithoutCancel(ctx), func() error {
		if leaving != nil {
			leaving()
		}
		if Passed(sendBy, now()) {
			return ErrSendByPassed
		}
		return nil
	})
}
