package submit

import (
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/sandbox"
)

// The resolver reads the clock submit was given, never the wall clock.
func TestResolverTakesSubmitsClock(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, sandbox.Options{}, testKey)
		clock := clocktest.New(clocktest.ChristmasEve)
		run := New(r.db, r.svc, Options{Now: clock.Now})
		if run.resolver.Now == nil {
			t.Fatal("the resolver has no clock")
		}
		if got := run.resolver.Now(); !got.Equal(clocktest.ChristmasEve) {
			t.Fatalf("resolver's now %v, want submit's %v", got, clocktest.ChristmasEve)
		}
		clock.Advance(72 * time.Hour)
		if got := run.resolver.Now(); !got.Equal(clock.Now()) {
			t.Fatalf("resolver's now %v after Advance, want %v", got, clock.Now())
		}
	})
}
