//go:build !linux

package bolt

// release does nothing where batchd does not run in production: the
// hint only keeps the RSS of a long scan down.
func release(uintptr, int64) {}
