// Package tick runs a function on a ticker in a goroutine of its own until
// told to stop, with a stop that waits for the last call: the pacing loop
// that a gauge refresher and a memory hint both need, written once.
// Nothing is decided on the clock here; the ticker only paces calls.
package tick

import "time"

// Every calls fn every interval (which must be positive) until the
// returned stop is called; stop waits for the goroutine to end, so no call
// of fn runs after stop returns.
func Every(interval time.Duration, fn func()) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fn()
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}
