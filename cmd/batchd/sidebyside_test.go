package main

import (
	"sync"
	"testing"
)

// sideBySide runs one subtest of t per name, all at once, and returns when
// every one has ended. It is for process tests that mostly wait (on a
// sandbox's rate or latency, on leases, on a promotion): t.Parallel would
// run them only as many at a time as -parallel allows (GOMAXPROCS, 2 in
// CI), so the suite would wait out their idle time one after another.
func sideBySide(t *testing.T, names []string, run func(t *testing.T, i int)) {
	t.Helper()
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { t.Run(name, func(t *testing.T) { run(t, i) }) })
	}
	wg.Wait()
}
