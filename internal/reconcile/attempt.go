package reconcile

import (
	"context"
	"fmt"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
)

// attempt calls fn under policy p until it succeeds or fails for good. A
// request the service did not act on, or whose answer was lost (for a
// read that only means the answer was not read), is tried again after the
// backoff and any Retry-After; a refused key (payment.ErrKeyRefused) or a
// refused request stops at once. Every error is prefixed with what.
func attempt(ctx context.Context, p retry.Policy, what string, fn func() error) error {
	p.MaxAttempts = max(p.MaxAttempts, 1)
	err := retry.Do(ctx, p, func(context.Context) error {
		err := fn()
		if err == nil {
			return nil
		}
		switch payment.FailureOf(err) {
		case payment.FailKeyRefused, payment.FailRefused:
			return retry.Permanent(err)
		}
		return retry.After(payment.RetryAfter(err), err)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
