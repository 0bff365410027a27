package jobs

import (
	"testing"
	"time"

	"github.com/batchd/batchd/internal/retry"
)

// A tokenization is asked again at most three times within a create, a
// second apart at most, whatever submit's policy: a stopping run waits
// for those tries.
func TestTokenizeRetry(t *testing.T) {
	for _, c := range []struct{ in, want retry.Policy }{
		{retry.Policy{Max: time.Minute, MaxAttempts: 10}, retry.Policy{Max: time.Second, MaxAttempts: 3}},
		{retry.Policy{Max: 300 * time.Millisecond, MaxAttempts: 2}, retry.Policy{Max: 300 * time.Millisecond, MaxAttempts: 2}},
		{retry.Policy{}, retry.Policy{Max: time.Second, MaxAttempts: 1}},
	} {
		if got := tokenizeRetry(c.in); got.Max != c.want.Max || got.MaxAttempts != c.want.MaxAttempts {
			t.Errorf("tokenizeRetry(%+v) = %+v, want %+v", c.in, got, c.want)
		}
	}
}
