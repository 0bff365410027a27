package logevery

import (
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
)

// TestGateOneLinePerInterval: the first event of a kind is logged, the
// next ones within Every are counted, and the next line carries that
// count; kinds are independent.
func TestGateOneLinePerInterval(t *testing.T) {
	c := clocktest.New(clocktest.Monday)
	g := &Gate{Every: time.Minute}
	lines, total := 0, 0
	for range 1000 {
		if n, due := g.Note("a", c.Now()); due {
			lines++
			total += n
		}
		c.Advance(time.Second / 2) // 500 s in all
	}
	if lines != 9 { // at 0, 60, 120, …, 480 s
		t.Errorf("%d lines over 500 s, want 9", lines)
	}
	if n, due := g.Note("b", c.Now()); !due || n != 1 {
		t.Errorf("first event of another kind: n=%d due=%v, want 1 true", n, due)
	}
	c.Advance(time.Minute)
	n, due := g.Note("a", c.Now())
	if !due || total+n != 1001 {
		t.Errorf("the lines count %d events, want 1001 (due %v)", total+n, due)
	}
}
