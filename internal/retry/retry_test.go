package retry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

var errFlaky = errors.New("flaky")

// fast is a policy whose waits are at most a millisecond.
func fast(attempts int) Policy {
	return Policy{Base: 100 * time.Microsecond, Max: time.Millisecond, MaxAttempts: attempts}
}

// withRandom fixes the jitter for one test.
func withRandom(t *testing.T, v float64) {
	t.Helper()
	old := random
	random = func() float64 { return v }
	t.Cleanup(func() { random = old })
}

func TestDoSucceedsAfterFailures(t *testing.T) {
	var n int
	var notified []error
	p := fast(5)
	p.Notify = func(err error, wait time.Duration) {
		notified = append(notified, err)
		if wait < 0 || wait > time.Millisecond {
			t.Errorf("wait %v outside [0, Max]", wait)
		}
	}
	err := Do(context.Background(), p, func(context.Context) error {
		n++
		if n < 3 {
			return fmt.Errorf("try %d: %w", n, errFlaky)
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Fatalf("Do = %v after %d calls, want nil after 3", err, n)
	}
	if len(notified) != 2 || !errors.Is(notified[1], errFlaky) {
		t.Fatalf("Notify got %v, want the 2 failures", notified)
	}
}

func TestDoWithoutMaxAttemptsRunsUntilSuccess(t *testing.T) {
	var n int
	err := Do(context.Background(), fast(0), func(context.Context) error {
		if n++; n <= 20 {
			return errFlaky
		}
		return nil
	})
	if err != nil || n != 21 {
		t.Fatalf("Do = %v after %d calls", err, n)
	}
}

func TestDoGivesUpAfterMaxAttempts(t *testing.T) {
	var n int
	var notes int
	p := fast(3)
	p.Notify = func(error, time.Duration) { notes++ }
	err := Do(context.Background(), p, func(context.Context) error {
		n++
		return fmt.Errorf("try %d: %w", n, errFlaky)
	})
	if n != 3 || notes != 2 {
		t.Fatalf("%d calls, %d notes; want 3 calls and 2 notes (the last failure is not retried)", n, notes)
	}
	if !errors.Is(err, errFlaky) || !strings.Contains(err.Error(), "gave up after 3 attempts: try 3: flaky") {
		t.Fatalf("Do = %v", err)
	}
	err = Do(context.Background(), fast(1), func(context.Context) error { return errFlaky })
	if !errors.Is(err, errFlaky) || err.Error() != "gave up after 1 attempt: flaky" {
		t.Fatalf("Do with one attempt = %v", err)
	}
}

type codeError struct{ code int }

func (e *codeError) Error() string { return fmt.Sprintf("code %d", e.code) }

func TestDoPermanentStopsAndIsUnwrapped(t *testing.T) {
	var n int
	orig := &codeError{code: 403}
	err := Do(context.Background(), fast(5), func(context.Context) error {
		n++
		return Permanent(orig)
	})
	if n != 1 {
		t.Fatalf("%d calls after a permanent error", n)
	}
	if err != error(orig) {
		t.Fatalf("Do = %#v, want the original error itself", err)
	}
	var ce *codeError
	if !errors.As(err, &ce) || ce.code != 403 {
		t.Fatalf("errors.As failed on %v", err)
	}

	// A permanent error on the last allowed try is still returned bare,
	// not as "gave up".
	n = 0
	err = Do(context.Background(), fast(2), func(context.Context) error {
		if n++; n < 2 {
			return errFlaky
		}
		return Permanent(orig)
	})
	if n != 2 || err != error(orig) {
		t.Fatalf("Do = %v after %d calls, want the bare permanent error after 2", err, n)
	}

	// Marked both ways.
	err = Do(context.Background(), fast(0), func(context.Context) error { return Permanent(After(time.Hour, orig)) })
	if err != error(orig) {
		t.Fatalf("Do = %#v, want the original error itself", err)
	}
	if Permanent(nil) != nil || After(time.Second, nil) != nil {
		t.Fatal("marking nil must give nil")
	}
}

func TestDoStopsWhenCtxEndsDuringWait(t *testing.T) {
	withRandom(t, 0.999)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n int
	p := Policy{Base: time.Hour, Max: time.Hour, MaxAttempts: 10}
	p.Notify = func(_ error, wait time.Duration) {
		if wait < 30*time.Minute {
			t.Errorf("wait %v, want close to an hour", wait)
		}
		go cancel() // while Do waits
	}
	start := time.Now()
	err := Do(ctx, p, func(context.Context) error {
		n++
		return errFlaky
	})
	if n != 1 {
		t.Fatalf("%d calls", n)
	}
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errFlaky) {
		t.Fatalf("Do = %v, want it to wrap both context.Canceled and the last error", err)
	}
	if !strings.Contains(err.Error(), "after 1 attempt") {
		t.Errorf("Do = %v, want the count of attempts", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("Do waited on after ctx ended")
	}
}

func TestDoStopsWhenCtxEndsDuringTry(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	var n int
	err := Do(ctx, fast(0), func(ctx context.Context) error {
		if n++; n == 3 {
			cancel()
			return fmt.Errorf("request: %w", ctx.Err())
		}
		return errFlaky
	})
	if n != 3 || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "request: context canceled") {
		t.Fatalf("Do = %v after %d calls", err, n)
	}
}

func TestDoWithEndedCtxDoesNotCallOp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	err := Do(ctx, fast(3), func(context.Context) error { called = true; return nil })
	if called || err != context.Canceled {
		t.Fatalf("Do = %v, called %v", err, called)
	}
}

func TestDoPassesCtxToOp(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "v")
	err := Do(ctx, fast(1), func(ctx context.Context) error {
		if ctx.Value(key{}) != "v" {
			return errors.New("not the caller's ctx")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// After sets a floor under the wait: it is measured, with a small d.
func TestAfterIsHonoured(t *testing.T) {
	const d = 20 * time.Millisecond
	var (
		n     int
		times []time.Time
		waits []time.Duration
		seen  []error
	)
	p := fast(3)
	p.Notify = func(err error, wait time.Duration) { waits, seen = append(waits, wait), append(seen, err) }
	err := Do(context.Background(), p, func(context.Context) error {
		times = append(times, time.Now())
		if n++; n == 1 {
			return After(d, errFlaky)
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("Do = %v after %d calls", err, n)
	}
	if got := times[1].Sub(times[0]); got < d {
		t.Fatalf("second try %v after the first, want at least %v", got, d)
	}
	if len(waits) != 1 || waits[0] < d {
		t.Fatalf("Notify waits %v, want one of at least %v", waits, d)
	}
	if seen[0] != errFlaky {
		t.Fatalf("Notify got %#v, want the error without the After mark", seen[0])
	}
}

// A Retry-After shorter than the backoff does not shorten it; it is checked
// on the wait Notify reports, and ctx is cancelled so that none is slept.
func TestBackoffLongerThanAfterWins(t *testing.T) {
	withRandom(t, 0.5)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wait time.Duration
	p := Policy{Base: time.Hour, Max: time.Hour}
	p.Notify = func(_ error, w time.Duration) { wait = w; cancel() }
	err := Do(ctx, p, func(context.Context) error { return After(time.Millisecond, errFlaky) })
	if wait != 30*time.Minute {
		t.Fatalf("wait %v, want the backoff's 30m", wait)
	}
	if !errors.Is(err, errFlaky) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Do = %v", err)
	}
	var ae *afterError
	if errors.As(err, &ae) {
		t.Fatalf("the After mark leaked into %v", err)
	}
}

func TestAfterWrapsErr(t *testing.T) {
	err := After(time.Second, errFlaky)
	if !errors.Is(err, errFlaky) || err.Error() != "flaky" {
		t.Fatalf("After = %v", err)
	}
	if After(0, errFlaky) != errFlaky {
		t.Fatal("After(0, err) should be err")
	}
}

// The waits grow as full jitter under Base·2ⁿ, capped at Max, starting over
// on Reset.
func TestJitterGrowsAndCaps(t *testing.T) {
	withRandom(t, 0.999999)
	var last error
	j := &jitter{base: 100 * time.Millisecond, max: time.Second, last: &last}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		got := j.NextBackOff()
		if got > w*time.Millisecond || got < w*time.Millisecond*99/100 {
			t.Errorf("wait %d = %v, want just under %vms", i, got, w)
		}
	}
	for range 100 {
		if got := j.NextBackOff(); got > time.Second {
			t.Fatalf("wait %v exceeds Max", got)
		}
	}
	j.Reset()
	if got := j.NextBackOff(); got > 100*time.Millisecond {
		t.Errorf("after Reset: %v", got)
	}
	withRandom(t, 0)
	last = After(7*time.Second, errFlaky)
	if got := j.NextBackOff(); got != 7*time.Second {
		t.Errorf("Retry-After not honoured: %v", got)
	}
	d := &jitter{last: &last}
	last = errFlaky
	withRandom(t, 0.999999)
	if got := d.NextBackOff(); got > DefaultBase || got < DefaultBase*99/100 {
		t.Errorf("default base: %v", got)
	}
	for range 100 {
		d.NextBackOff()
	}
	if got := d.NextBackOff(); got > DefaultMax || got < DefaultMax*99/100 {
		t.Errorf("default max: %v", got)
	}
}

func TestSleepCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); err != context.Canceled {
		t.Fatalf("Sleep = %v", err)
	}
}
