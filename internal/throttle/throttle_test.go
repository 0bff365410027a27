package throttle

import (
	"context"
	"golang.org/x/time/rate"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestAIMD(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	l := newAt(100, 10, clk.now)
	if r := l.Rate(); r != 100 {
		t.Fatalf("initial rate %v", r)
	}
	l.Throttled()
	if r := l.Rate(); r != 50 {
		t.Fatalf("after 429 rate %v, want 50", r)
	}
	l.Throttled() // within cooldown: ignored
	if r := l.Rate(); r != 50 {
		t.Fatalf("second 429 within cooldown changed rate to %v", r)
	}
	clk.advance(1500 * time.Millisecond)
	if r := l.Rate(); r != 55 {
		t.Fatalf("after 1.5s quiet rate %v, want 55", r)
	}
	l.Throttled()
	if r := l.Rate(); r != 27.5 {
		t.Fatalf("after second 429 rate %v, want 27.5", r)
	}
	for i := 0; i < 30; i++ {
		clk.advance(time.Second)
	}
	if r := l.Rate(); r != 100 {
		t.Fatalf("after recovery rate %v, want ceiling 100", r)
	}
}

func TestFloor(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	l := newAt(10, 1, clk.now)
	for i := 0; i < 20; i++ {
		l.Throttled()
		clk.advance(999 * time.Millisecond) // under a second: no recovery step
		clk.advance(2 * time.Millisecond)
		l.lastStep = clk.now() // keep recovery out of this test
	}
	if r := l.Rate(); r != 0.5 {
		t.Fatalf("floor rate %v, want 0.5", r)
	}
}

func TestUnlimited(t *testing.T) {
	l := New(0, 1)
	l.Throttled()
	if r := l.Rate(); r != float64(rate.Inf) {
		t.Fatalf("unlimited rate %v", r)
	}
	for i := 0; i < 1000; i++ {
		if err := l.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPauseHonoursContext(t *testing.T) {
	l := New(0, 1)
	l.Pause(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Wait(ctx); err == nil {
		t.Fatal("Wait during a pause ignored a cancelled context")
	}
}
