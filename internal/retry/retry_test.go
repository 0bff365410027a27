package retry

import (
	"context"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	top := func() float64 { return 0.999999 }
	b := Backoff{Base: 100 * time.Millisecond, Max: time.Second, Rand: top}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for n, w := range want {
		got := b.Delay(n, 0)
		if got > w*time.Millisecond || got < w*time.Millisecond*99/100 {
			t.Errorf("Delay(%d) = %v, want just under %vms", n, got, w)
		}
	}
	if got := b.Delay(100, 0); got > time.Second {
		t.Errorf("Delay(100) = %v exceeds Max", got)
	}
	zero := Backoff{Rand: func() float64 { return 0 }}
	if got := zero.Delay(3, 7*time.Second); got != 7*time.Second {
		t.Errorf("Retry-After not honoured: %v", got)
	}
}

func TestSleepCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); err != context.Canceled {
		t.Fatalf("Sleep = %v", err)
	}
}
