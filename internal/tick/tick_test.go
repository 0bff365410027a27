package tick

import (
	"sync/atomic"
	"testing"
	"time"
)

// fn runs again and again until stop, and never after stop returns.
func TestEveryStopsForGood(t *testing.T) {
	var calls atomic.Int64
	ran := make(chan struct{}, 1)
	stop := Every(time.Millisecond, func() {
		calls.Add(1)
		select {
		case ran <- struct{}{}:
		default:
		}
	})
	for range 3 {
		<-ran
	}
	stop()
	after := calls.Load()
	if after < 3 {
		t.Fatalf("%d calls before stop", after)
	}
	for range 100 {
		if calls.Load() != after {
			t.Fatal("fn ran after stop returned")
		}
	}
}
