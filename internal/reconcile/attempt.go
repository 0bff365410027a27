package reconcile

import (
	"context"
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/retry"
)

// ErrAuth is wrapped by the error of a run that the service refused for
// its API key (401 or 403): no later request could succeed, so the run
// stops at once.
var ErrAuth = errors.New("the service refused the API key (check api.key and its permissions)")

// attempt calls fn until it succeeds, fails for good, or has failed
// maxAttempts times. Retryable errors (and Ambiguous ones, which for a
// read only mean "the answer was not read") wait with backoff and any
// Retry-After; Fatal ones stop at once wrapped in ErrAuth; the rest are
// returned as they are.
func attempt(ctx context.Context, b retry.Backoff, maxAttempts int, what string, fn func() error) error {
	for n := 0; ; n++ {
		err := fn()
		switch echeck.ClassOf(err) {
		case 0:
			return nil
		case echeck.Fatal:
			return fmt.Errorf("%s: %w: %w", what, ErrAuth, err)
		case echeck.Retryable, echeck.Ambiguous:
			if ctx.Err() != nil {
				return fmt.Errorf("%s: %w", what, ctx.Err())
			}
			if n+1 >= maxAttempts {
				return fmt.Errorf("%s: gave up after %d attempts: %w", what, n+1, err)
			}
			var e *echeck.Error
			var after = b.Delay(n, 0)
			if errors.As(err, &e) {
				after = b.Delay(n, e.RetryAfter)
			}
			if serr := retry.Sleep(ctx, after); serr != nil {
				return fmt.Errorf("%s: %w", what, serr)
			}
		default:
			return fmt.Errorf("%s: %w", what, err)
		}
	}
}
