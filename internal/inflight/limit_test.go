package inflight

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
)

// rig is a Limit on a test clock with a settable rate.
type rig struct {
	clock *clocktest.Clock
	mu    sync.Mutex
	rps   float64
	l     *Limit
}

func newRig(t *testing.T, ceiling int, rps float64) *rig {
	t.Helper()
	r := &rig{clock: clocktest.New(clocktest.ChristmasEve), rps: rps}
	r.l = New(Options{Ceiling: ceiling, Rate: r.rate, Now: r.clock.Now})
	return r
}

func (r *rig) rate() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rps
}

func (r *rig) setRate(rps float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rps = rps
}

// round acquires every free slot, lets latency pass on the clock and
// releases them all with o: one round trip at the current limit.
func (r *rig) round(t *testing.T, latency time.Duration, o Outcome) {
	t.Helper()
	n := r.l.Current()
	slots := make([]*Slot, 0, n)
	for i := 0; i < n; i++ {
		s, err := r.l.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		slots = append(slots, s)
	}
	r.clock.Advance(latency)
	for _, s := range slots {
		s.Release(o)
	}
}

// Little's law: 20/s at 300 ms needs 6 in flight, 9 with the headroom;
// the limit starts at 4 and reaches 9 in two round trips, not more.
func TestGrowsToLittlesLawWithinTwoRoundTrips(t *testing.T) {
	r := newRig(t, 64, 20)
	if got := r.l.Current(); got != DefaultInitial {
		t.Fatalf("starts at %d, want %d", got, DefaultInitial)
	}
	r.round(t, 300*time.Millisecond, Answered)
	if got := r.l.Current(); got != 8 {
		t.Fatalf("after one round trip %d, want 8 (one more per answer)", got)
	}
	r.round(t, 300*time.Millisecond, Answered)
	if got := r.l.Current(); got != 9 {
		t.Fatalf("after two round trips %d, want the target 9", got)
	}
	for i := 0; i < 5; i++ {
		r.round(t, 300*time.Millisecond, Answered)
	}
	if got := r.l.Current(); got != 9 {
		t.Fatalf("settled at %d, want 9", got)
	}
}

// Without a rate budget the target is the ceiling, and the limit never
// passes it.
func TestWithoutRateGrowsToCeiling(t *testing.T) {
	r := newRig(t, 20, 0)
	for i := 0; i < 10; i++ {
		r.round(t, 20*time.Millisecond, Answered)
	}
	if got := r.l.Current(); got != 20 {
		t.Fatalf("limit %d, want the ceiling 20", got)
	}
}

// The initial limit never exceeds the ceiling, and the ceiling is at
// least 1.
func TestInitialWithinCeiling(t *testing.T) {
	if got := New(Options{Ceiling: 2}).Current(); got != 2 {
		t.Fatalf("ceiling 2: starts at %d", got)
	}
	if got := New(Options{}).Current(); got != 1 {
		t.Fatalf("no ceiling: starts at %d, want 1", got)
	}
}

// Time queued on the rate limiter is not latency: a slot that waited
// 10 s for a token and 300 ms for the service counts 300 ms.
func TestRateLimiterWaitIsNotLatency(t *testing.T) {
	r := newRig(t, 64, 20)
	for i := 0; i < 6; i++ {
		n := r.l.Current()
		slots := make([]*Slot, n)
		for j := range slots {
			s, err := r.l.Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			s.Queued()
			slots[j] = s
		}
		r.clock.Advance(10 * time.Second)
		for _, s := range slots {
			s.Sent()
		}
		r.clock.Advance(300 * time.Millisecond)
		for _, s := range slots {
			s.Release(Answered)
		}
	}
	if got := r.l.Current(); got != 9 {
		t.Fatalf("limit %d, want 9: the wait on the rate limiter counted", got)
	}
}

// A slot that carried two requests, one after the other, counts the time
// per request: two of 300 ms (and a wait on the rate limiter before each)
// are a 300 ms latency, and 20/s still needs 9 slots.
func TestSlotOfSeveralRequests(t *testing.T) {
	r := newRig(t, 64, 20)
	for i := 0; i < 6; i++ {
		slots := make([]*Slot, r.l.Current())
		for j := range slots {
			s, err := r.l.Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			slots[j] = s
		}
		for range 2 {
			for _, s := range slots {
				s.Queued()
			}
			r.clock.Advance(time.Second)
			for _, s := range slots {
				s.Sent()
			}
			r.clock.Advance(300 * time.Millisecond)
		}
		for _, s := range slots {
			s.Release(Answered)
		}
	}
	if got := r.l.Current(); got != 9 {
		t.Fatalf("limit %d, want 9: a slot's two requests counted as one of 600 ms", got)
	}
}

// A drop halves the limit once per window: the other slots of the same
// window dropping too do not halve it again. It never goes below 1.
func TestDropHalvesOncePerWindow(t *testing.T) {
	r := newRig(t, 64, 0)
	for i := 0; i < 3; i++ {
		r.round(t, 10*time.Millisecond, Answered)
	}
	if got := r.l.Current(); got != 32 {
		t.Fatalf("limit %d before the drops, want 32", got)
	}
	r.round(t, 10*time.Millisecond, Dropped) // 32 drops, one window
	if got := r.l.Current(); got != 16 {
		t.Fatalf("after a window of drops %d, want 16", got)
	}
	for i := 0; i < 10; i++ {
		r.round(t, 10*time.Millisecond, Dropped)
	}
	if got := r.l.Current(); got != 1 {
		t.Fatalf("after ten windows of drops %d, want the floor 1", got)
	}
	r.round(t, 10*time.Millisecond, Answered)
	if got := r.l.Current(); got != 2 {
		t.Fatalf("after an answer %d, want 2", got)
	}
}

// When the rate limiter halves its rate (a 429), the target halves and
// the limit follows at the next answer.
func TestFollowsRateDown(t *testing.T) {
	r := newRig(t, 64, 100)
	for i := 0; i < 5; i++ {
		r.round(t, 200*time.Millisecond, Answered)
	}
	if got := r.l.Current(); got != 30 {
		t.Fatalf("limit %d at 100/s x 200 ms, want 30", got)
	}
	r.setRate(50)
	r.round(t, 200*time.Millisecond, Answered)
	if got := r.l.Current(); got != 15 {
		t.Fatalf("limit %d at 50/s, want 15", got)
	}
}

// Latency far above its long-run average is queueing at the service: a
// round trip of 2 s after many of 100 ms buys a few times the slots, not
// the twenty times (the ceiling) Little's law alone would give.
func TestLatencySpikeCapped(t *testing.T) {
	r := newRig(t, 256, 100)
	for i := 0; i < 20; i++ {
		r.round(t, 100*time.Millisecond, Answered)
	}
	if got := r.l.Current(); got != 15 {
		t.Fatalf("limit %d at 100/s x 100 ms, want 15", got)
	}
	r.round(t, 2*time.Second, Answered)
	if got := r.l.Target(); got > 50 {
		t.Fatalf("target %d after a latency spike, want at most 50, not the ceiling", got)
	}
}

// Latency that grows within the tolerance is the service's pace and buys
// slots; a jump far above the long-run average is queueing, and the limit
// shrinks back to what the rate needs at the long-run latency.
func TestQueueingShrinksTheLimit(t *testing.T) {
	r := newRig(t, 256, 100)
	for i := 0; i < 40; i++ {
		r.round(t, 100*time.Millisecond, Answered)
	}
	for i := 0; i < 3; i++ {
		r.round(t, 180*time.Millisecond, Answered)
	}
	grown := r.l.Current()
	if grown <= 15 {
		t.Fatalf("limit %d after latency grew from 100 to 180 ms at 100/s, want above 15", grown)
	}
	r.round(t, 2*time.Second, Answered)
	shrunk := r.l.Current()
	if shrunk >= grown || shrunk > 20 {
		t.Fatalf("limit %d after answers at 20x the long-run latency (was %d), want it back near 15", shrunk, grown)
	}
	// The service's pace again: the limit follows the recent latency.
	for i := 0; i < 10; i++ {
		r.round(t, 100*time.Millisecond, Answered)
	}
	if got := r.l.Current(); got < 15 || got > 17 {
		t.Fatalf("limit %d back at 100 ms, want about 15", got)
	}
}

// The long-run average of the first answers is their mean: one fast
// first answer does not make the service's normal pace look like
// queueing a moment later.
func TestFirstAnswersAreTheLongRunPace(t *testing.T) {
	r := newRig(t, 256, 100)
	r.round(t, 10*time.Millisecond, Answered)
	for i := 0; i < 6; i++ {
		r.round(t, 200*time.Millisecond, Answered)
	}
	if got := r.l.Current(); got < 29 {
		t.Fatalf("limit %d at 100/s x 200 ms after one 10 ms round, want 30", got)
	}
}

// A frozen clock measures no latency: the limit grows as without a rate.
func TestFrozenClockIsNoSample(t *testing.T) {
	r := newRig(t, 16, 20)
	for i := 0; i < 5; i++ {
		r.round(t, 0, Answered)
	}
	if got := r.l.Current(); got != 16 {
		t.Fatalf("limit %d on a frozen clock, want the ceiling 16", got)
	}
}

// waitQueued waits until n Acquires are queued: a condition, not a sleep.
func waitQueued(l *Limit, n int) {
	for {
		l.mu.Lock()
		q := len(l.queue)
		l.mu.Unlock()
		if q >= n {
			return
		}
		runtime.Gosched()
	}
}

// A full limit makes Acquire wait; waiters get freed slots in arrival
// order; a cancelled waiter leaves the queue and holds nothing.
func TestAcquireWaitsInOrderAndCancels(t *testing.T) {
	l := New(Options{Ceiling: 1, Now: clocktest.New(clocktest.ChristmasEve).Now})
	first, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 2)
	got := make(chan *Slot, 2)
	for i := 1; i <= 2; i++ {
		go func() {
			s, err := l.Acquire(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			got <- s
		}()
		waitQueued(l, i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancelled := make(chan error)
	go func() {
		_, err := l.Acquire(ctx)
		cancelled <- err
	}()
	waitQueued(l, 3)
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Acquire: %v", err)
	}
	first.Release(Ignored)
	first.Release(Answered) // a second Release does nothing
	if o := <-order; o != 1 {
		t.Fatalf("waiter %d served first, want 1", o)
	}
	(<-got).Release(Ignored)
	if o := <-order; o != 2 {
		t.Fatalf("waiter %d served second, want 2", o)
	}
	(<-got).Release(Ignored)
	if n := l.InFlight(); n != 0 {
		t.Fatalf("%d slots held after every release", n)
	}
}

// Many goroutines at once never hold more slots than the limit allows,
// and every slot comes back.
func TestConcurrentUseStaysWithinCeiling(t *testing.T) {
	l := New(Options{Ceiling: 8})
	var mu sync.Mutex
	held, most := 0, 0
	var wg sync.WaitGroup
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				s, err := l.Acquire(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				held++
				most = max(most, held)
				mu.Unlock()
				mu.Lock()
				held--
				mu.Unlock()
				s.Release([]Outcome{Answered, Dropped, Ignored}[i%3])
			}
		}()
	}
	wg.Wait()
	if most > 8 {
		t.Fatalf("%d slots held at once, ceiling 8", most)
	}
	if n := l.InFlight(); n != 0 {
		t.Fatalf("%d slots held at the end", n)
	}
}
