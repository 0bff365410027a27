package rowrun

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/sendgate"
)

func TestPassed(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		sendBy, now time.Time
		want        bool
	}{
		{time.Time{}, at, false},            // no deadline: never passes
		{at, at, false},                     // at the deadline it may still leave
		{at, at.Add(time.Nanosecond), true}, // after it, not
	}
	for _, c := range cases {
		if got := Passed(c.sendBy, c.now); got != c.want {
			t.Errorf("Passed(%v, %v) = %v, want %v", c.sendBy, c.now, got, c.want)
		}
	}
}

func TestGateChecksAtTheLastMoment(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := at
	leaving := 0
	ctx, cancel := context.WithCancel(context.Background())
	g := Gate(ctx, at, func() time.Time { return now }, func() { leaving++ })
	cancel()
	if g.Err() != nil {
		t.Fatalf("gated context cancelled with the run: %v", g.Err())
	}
	if err := sendgate.Check(g); err != nil {
		t.Fatalf("gate at the deadline: %v", err)
	}
	now = at.Add(time.Second)
	if err := sendgate.Check(g); !errors.Is(err, ErrSendByPassed) {
		t.Fatalf("gate past the deadline: %v, want ErrSendByPassed", err)
	}
	if leaving != 2 {
		t.Fatalf("leaving told %d times, want 2", leaving)
	}
	if err := sendgate.Check(Gate(ctx, at, func() time.Time { return now }, nil)); !errors.Is(err, ErrSendByPassed) {
		t.Fatalf("gate without leaving: %v", err)
	}
}
