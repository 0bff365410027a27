package rowrun

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cenkalti/backoff/v5"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
)

// recorder notes which actions Failed took, in order.
type recorder struct{ did []string }

func (rec *recorder) actions() Actions {
	note := func(s string) error { rec.did = append(rec.did, s); return nil }
	return Actions{
		Reject:   func(msg string) error { return note("reject " + msg) },
		Release:  func(reason string) error { return note("release " + reason) },
		Doubt:    func(reason string, _ error) error { return note("doubt " + reason) },
		Halt:     func(err error) error { note("halt"); return retry.Permanent(err) },
		Retrying: func() { note("retrying") },
	}
}

// TestFailedByOutcome pins the rules exactly-once rests on: a lost answer
// puts the row in doubt and never releases it; only what the service did
// not act on is released to be sent again.
func TestFailedByOutcome(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"refused", fmt.Errorf("%w: bad routing", payment.ErrRefused), "reject refused by the service: bad routing"},
		{"key refused", fmt.Errorf("%w: 401", payment.ErrKeyRefused), "release the API refused the key: |halt"},
		{"lost", errors.New("timeout"), "doubt create: answer lost: timeout"},
		{"not done", fmt.Errorf("%w: 503", payment.ErrNotDone), "release create: not processed: |retrying"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rec recorder
			_ = Failed(c.err, "create: ", rec.actions())
			got := strings.Join(rec.did, "|")
			for _, part := range strings.Split(c.want, "|") {
				if !strings.Contains(got, part) {
					t.Fatalf("actions %q, want %q", got, c.want)
				}
			}
			if len(rec.did) != len(strings.Split(c.want, "|")) {
				t.Fatalf("actions %q, want only %q", got, c.want)
			}
		})
	}
}

func TestFailedReturns(t *testing.T) {
	var rec recorder
	if err := Failed(errors.New("timeout"), "", rec.actions()); err != nil {
		t.Fatalf("a row in doubt reached its outcome, got %v", err)
	}
	notDone := fmt.Errorf("%w: 503", payment.ErrNotDone)
	if err := Failed(notDone, "", rec.actions()); err != notDone {
		t.Fatalf("not done: %v, want a retryable error", err)
	}
	err := Failed(fmt.Errorf("%w: 401", payment.ErrKeyRefused), "", rec.actions())
	var perm *backoff.PermanentError
	if !errors.Is(err, payment.ErrKeyRefused) || !errors.As(err, &perm) {
		t.Fatalf("key refused: %v, want a permanent ErrKeyRefused", err)
	}
	ledger := errors.New("ledger down")
	a := rec.actions()
	a.Release = func(string) error { return ledger }
	a.Halt = func(error) error { t.Fatal("halted after the release failed"); return nil }
	if err := Failed(fmt.Errorf("%w: 401", payment.ErrKeyRefused), "", a); err != ledger {
		t.Fatalf("release failed: %v, want the ledger's error", err)
	}
}
