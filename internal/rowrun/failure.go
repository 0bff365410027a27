package rowrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
)

// Actions are what a kind does to its row in flight when a request with
// an effect (a create, a verification) failed. Each writes the kind's own
// ledger row, counts and logs; each returns nil when it did its part, or
// the error the attempt ends with (a ledger failure halts the run).
type Actions struct {
	// Reject records the service's refusal, in its words: the row's
	// answer.
	Reject func(msg string) error
	// Release returns the row to pending: nothing of it was done.
	Release func(reason string) error
	// Doubt puts the row in doubt: the request may have had its effect.
	Doubt func(reason string, err error) error
	// Halt stops the run for a refused key and returns what the attempt
	// returns (a permanent error).
	Halt func(err error) error
	// Retrying, optional, is told when a released row may be sent again.
	Retrying func()
}

// Failed records the failure err of a request of a row in flight by what
// it tells of the request's effect (payment.FailureOf):
//   - refused: the row is rejected with the service's words;
//   - the key refused: the row is released and the run stops;
//   - lost: the row is in doubt, to be looked up before any resend, never
//     released: its create may have been done;
//   - not done: the row is released and may be sent again, no sooner than
//     the service asked (Retry-After).
//
// prefix goes before the reasons of doubt and of a retry (the request, for
// a kind that makes more than one). It returns nil when the row reached an
// outcome, a permanent error when the run must stop, and a retryable one
// when the row may be sent again.
func Failed(err error, prefix string, a Actions) error {
	switch payment.FailureOf(err) {
	case payment.FailRefused:
		return a.Reject(payment.ServiceMessage(err))
	case payment.FailKeyRefused:
		if lerr := a.Release("the API refused the key: " + err.Error()); lerr != nil {
			return lerr
		}
		return a.Halt(fmt.Errorf("%w: %w", payment.ErrKeyRefused, err))
	case payment.FailLost:
		return a.Doubt(prefix+"answer lost: "+err.Error(), err)
	default: // FailNotDone: the service did not act on the request
		if lerr := a.Release(prefix + "not processed: " + err.Error()); lerr != nil {
			return lerr
		}
		if a.Retrying != nil {
			a.Retrying()
		}
		// The client has already paused the shared limiter for the
		// service's Retry-After; the row waits at least as long.
		return retry.After(payment.RetryAfter(err), err)
	}
}

// Read runs a request without an effect (a list, a lookup), retrying by p
// whatever the service did not refuse: reading again cannot do harm, so a
// lost answer is as retryable as a 503, no sooner than the service asked
// (Retry-After). A refusal or a refused key comes back at once.
func Read(ctx context.Context, p retry.Policy, op func(ctx context.Context) error) error {
	return retry.Do(ctx, p, func(ctx context.Context) error {
		err := op(ctx)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, payment.ErrKeyRefused), errors.Is(err, payment.ErrRefused):
			return retry.Permanent(err)
		}
		return retry.After(payment.RetryAfter(err), err)
	})
}
