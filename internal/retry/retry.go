// Package retry runs an operation again after failures, with exponential
// backoff and full jitter, capped, bounded in attempts, stopped early by
// permanent errors or the context, and stretched by a server's Retry-After.
//
// The retry loop itself is github.com/cenkalti/backoff/v5's Retry; this
// package supplies the backoff (full jitter, Retry-After aware) and gives
// its results the error contract batchd's callers rely on.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Defaults for the zero values in Policy.
const (
	DefaultBase = 250 * time.Millisecond
	DefaultMax  = time.Minute
)

// Policy says how often and how long an operation is tried.
type Policy struct {
	Base        time.Duration // first backoff ceiling; default 250ms
	Max         time.Duration // backoff cap; default 1m
	MaxAttempts int           // tries in all, the first included; 0 (or less) means until ctx ends
	// Notify, when set, is told of each failure that will be retried and the
	// wait before the next try. It runs on the goroutine that called Do.
	Notify func(err error, wait time.Duration)
}

// Do calls op until it returns nil, returns an error marked Permanent, has
// been called MaxAttempts times, or ctx ends. A permanent error is returned
// unwrapped (the original error, errors.Is/As work on it). When attempts run
// out, the error says how many tries were made and wraps the last error.
// When ctx ends during a wait (or during a try that then fails), the error
// wraps both ctx.Err() and the last error. If ctx has already ended, op is
// not called and ctx.Err() is returned.
//
// The wait after the n-th failure (n counting from 0) is uniformly random in
// [0, min(Max, Base·2ⁿ)), or the duration given to After if that is longer.
func Do(ctx context.Context, p Policy, op func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var (
		tries int
		last  error
	)
	b := &jitter{base: p.Base, max: p.Max, last: &last}
	opts := []backoff.RetryOption{
		backoff.WithBackOff(b),
		// backoff.Retry gives up after 15 minutes unless told otherwise;
		// here only MaxAttempts and ctx bound the tries.
		backoff.WithMaxElapsedTime(0),
	}
	if p.MaxAttempts > 0 {
		opts = append(opts, backoff.WithMaxTries(uint(p.MaxAttempts)))
	}
	if p.Notify != nil {
		opts = append(opts, backoff.WithNotify(func(err error, wait time.Duration) { p.Notify(bare(err), wait) }))
	}
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		tries++
		last = op(ctx)
		return struct{}{}, last
	}, opts...)
	if err == nil {
		return nil
	}
	var pe *backoff.PermanentError
	switch {
	case last == nil: // cannot happen: Retry fails only after op did
		return err
	case errors.As(last, &pe):
		// Also when the permanent error came on the last allowed try,
		// where backoff.Retry returns it still marked.
		return bare(pe.Err)
	case p.MaxAttempts > 0 && tries >= p.MaxAttempts:
		return fmt.Errorf("gave up after %s: %w", plural(tries), bare(last))
	case ctx.Err() != nil:
		return fmt.Errorf("%w (after %s, the last: %w)", ctx.Err(), plural(tries), bare(last))
	}
	return bare(err)
}

// Permanent marks err as not worth retrying: Do returns it at once, without
// the mark. Permanent(nil) is nil.
func Permanent(err error) error {
	return backoff.Permanent(err)
}

// After marks err as retryable no sooner than d (a server's Retry-After);
// the backoff wait is max(d, backoff). After(d, nil) is nil; a d of zero or
// less leaves err as it is.
func After(d time.Duration, err error) error {
	if err == nil || d <= 0 {
		return err
	}
	return &afterError{d: d, err: err}
}

// afterError carries a Retry-After. It is batchd's own rather than
// backoff.RetryAfterError, which carries no error and replaces the backoff
// instead of setting a floor under it.
type afterError struct {
	d   time.Duration
	err error
}

func (e *afterError) Error() string { return e.err.Error() }
func (e *afterError) Unwrap() error { return e.err }

// bare removes the marks Permanent and After put on the outside of err.
func bare(err error) error {
	for {
		switch e := err.(type) {
		case *afterError:
			err = e.err
		case *backoff.PermanentError:
			err = e.Err
		default:
			return err
		}
	}
}

func plural(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

// random returns a number in [0, 1); tests replace it.
var random = rand.Float64

// jitter is the backoff.BackOff that backoff.Retry asks for each wait:
// exponential with full jitter, so that many workers failing together do
// not return to the service in step, and never shorter than a Retry-After
// carried by the error that failed last.
type jitter struct {
	base, max time.Duration
	n         int    // waits so far
	last      *error // the error the wait follows
}

func (j *jitter) Reset() { j.n = 0 }

func (j *jitter) NextBackOff() time.Duration {
	d := time.Duration(random() * float64(ceiling(j.base, j.max, j.n)))
	j.n++
	var ae *afterError
	if j.last != nil && errors.As(*j.last, &ae) && ae.d > d {
		d = ae.d
	}
	return d
}

// ceiling is min(max, base·2ⁿ), with the defaults for zero values.
func ceiling(base, max time.Duration, n int) time.Duration {
	if base <= 0 {
		base = DefaultBase
	}
	if max <= 0 {
		max = DefaultMax
	}
	if n < 62 {
		if c := base << n; c > 0 && c < max && c>>n == base {
			return c
		}
	}
	return max
}

// Sleep waits d or until ctx is done, and reports ctx's error in that case.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
