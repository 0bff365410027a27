package submit

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/sandbox"
)

// TestOnCreatedCountsAsChecksAreRecorded: OnCreated hears of every check
// as it is recorded, those created and those found after a lost answer,
// so that a metric moves during the run; its total is the summary's.
func TestOnCreatedCountsAsChecksAreRecorded(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, sandbox.Options{DropRate: 0.3, Seed: 11}, testKey)
		b := r.load("a.csv", payments(30)...)
		var total, calls atomic.Int64
		sum, err := New(r.db, r.svc, Options{Concurrency: 4, ResolveAfter: 20 * time.Millisecond, SendMargin: testSendMargin,
			Retry:     retry.Policy{Base: time.Millisecond, Max: 20 * time.Millisecond, MaxAttempts: 50},
			OnCreated: func(n int) { total.Add(int64(n)); calls.Add(1) }}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r.sb.Stats().Drops == 0 {
			t.Fatal("no answer was dropped; the lookup path is not exercised")
		}
		if total.Load() != int64(sum.Created) || sum.Created != 30 {
			t.Errorf("OnCreated total %d, summary created %d, want both 30", total.Load(), sum.Created)
		}
		if calls.Load() < 2 {
			t.Errorf("OnCreated called %d times: want it told as checks are recorded, not once at the end", calls.Load())
		}
		r.assertExactlyOnce(b.ID, 30)
	})
}
