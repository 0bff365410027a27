package jobs

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/inflight"
	"github.com/batchd/batchd/internal/ledgertest"
)

// The Env's in-flight limit has api.concurrency as its ceiling, follows
// the Env's rate limiter by Little's law and measures latency on the
// Env's clock: 20/s at 300 ms, with the headroom, is 9 in flight.
func TestInFlightFollowsRateAndClock(t *testing.T) {
	clk := clocktest.New(clocktest.ChristmasEve)
	c := config.Default()
	c.StateDir = filepath.Join(t.TempDir(), "state")
	c.API.BaseURL, c.API.Mode, c.API.Rate = "http://127.0.0.1:1", config.ModeTest, 20
	c.SetAPIKey("sk_test_inflight_0123456789abcdef")
	env := openEnv(t, ledgertest.Bbolt, c, clk.Now)
	if got := env.InFlight.Ceiling(); got != 64 {
		t.Fatalf("ceiling %d, want api.concurrency's default 64", got)
	}
	for round := 0; round < 4; round++ {
		n := env.InFlight.Current()
		slots := make([]*inflight.Slot, n)
		for i := range slots {
			s, err := env.InFlight.Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			slots[i] = s
		}
		clk.Advance(300 * time.Millisecond)
		for _, s := range slots {
			s.Release(inflight.Answered)
		}
	}
	if got := env.InFlight.Current(); got != 9 {
		t.Fatalf("limit %d at 20/s and 300 ms, want 9", got)
	}
}
