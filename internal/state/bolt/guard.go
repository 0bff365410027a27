package bolt

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/batchd/batchd/internal/tick"
)

// Reading a file that may be damaged. bbolt meets a damaged page by
// panicking, and a page past the end of its mapping by faulting; batchd
// never ends in a panic on a damaged ledger, so every read of a file that
// has not been verified yet runs under Guarded.

// damage is a panic inside bbolt (or a memory fault reading the mapped
// file) turned into an error.
type damage struct{ v any }

func (d damage) Error() string { return fmt.Sprintf("the file is damaged (%v)", d.v) }

// Guarded runs fn with memory faults turned into panics and any panic
// into a damage error. bbolt meets a damaged page by panicking, and a
// pointer to a page past the end of the mapped file by faulting, which
// without SetPanicOnFault ends the process.
func Guarded(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = damage{r}
		}
	}()
	return fn()
}

// boltOpen opens path with bbolt, turning a panic while bbolt reads the
// file (its freelist, say) into an error and closing the file (and so its
// lock) behind it.
func boltOpen(path string, o bolt.Options) (*bolt.DB, error) {
	var f *os.File
	o.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		ff, err := os.OpenFile(name, flag, perm)
		if f == nil && err == nil {
			f = ff // the data file is the first one bbolt opens
		}
		return ff, err
	}
	o.PreLoadFreelist = true // read it now, under guard, not later in a goroutine of bbolt's
	var b *bolt.DB
	err := Guarded(func() (err error) {
		b, err = bolt.Open(path, 0o600, &o)
		return err
	})
	var dmg damage
	if errors.As(err, &dmg) && f != nil {
		f.Close()
	}
	return b, err
}

// structure walks every bucket of tx, touching every key and value (and
// so every branch, leaf and overflow page), under guard; and only if that
// walk is sound, runs bbolt's own consistency check (tx.Check). A walk
// that faults stops at the first fault: tx.Check runs in a goroutine of
// its own, where a fault could not be caught. It returns the problems
// found, at most limit of them.
//
// Both read the whole file through bbolt's memory map, so both hand the
// pages back as they go (kv.Tx.Release): else the whole file is counted in
// the RSS of every process that opens it, reconcile's among them.
func structure(tx *bolt.Tx, limit int) []string {
	release := Tx(tx).Release
	defer release()
	var faults []string
	n := 0
	err := Guarded(func() error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			return touch(b, &n, release)
		})
	})
	if err != nil {
		return []string{"cannot read the file's tree: " + err.Error()}
	}
	stop := releaseMeanwhile(release)
	defer stop()
	for e := range tx.Check() {
		if len(faults) < limit {
			// bbolt reports a panic of its check as "panic: …".
			faults = append(faults, strings.Replace(e.Error(), "panic: ", "bbolt stopped: ", 1))
		}
	}
	return faults
}

// releaseMeanwhile calls release every 2 ms until the returned stop is
// called, which waits for the last call: tx.Check reads the whole file in
// a goroutine of bbolt's, with no hook to hint from. The caller's read
// transaction must stay open until stop returns. The ticker only paces a
// memory hint; nothing is decided on the clock.
func releaseMeanwhile(release func()) (stop func()) {
	return tick.Every(2*time.Millisecond, release) // the check reads a few MB in that time
}

// touch reads every key and value of b and of the buckets in it, giving
// the hint release every touchRelease bytes of keys and values read (n
// counts them). The walk reads the file in key order, page after page, so
// the bytes it read are about the pages it brought into the mapping.
func touch(b *bolt.Bucket, n *int, release func()) error {
	var sink byte
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if *n += len(k) + len(v); *n >= touchRelease {
			*n = 0
			release()
		}
		sink ^= k[0] ^ k[len(k)-1]
		if v == nil {
			if child := b.Bucket(k); child != nil {
				if err := touch(child, n, release); err != nil {
					return err
				}
			}
			continue
		}
		if len(v) > 0 {
			sink ^= v[0] ^ v[len(v)-1]
		}
	}
	_ = sink
	return nil
}

// touchRelease is how many bytes of keys and values the walk at open
// (touch) reads between two hints. That walk reads the file in order, so
// the pages it maps are about the bytes it reads: 1 MB of them keeps the
// file's resident pages to a few MB, as internal/state's releaseEvery
// does for random row reads. Hinting every releaseEvery entries instead
// (about 1,200 hints for a 100,000-row ledger, most entries being small
// index keys) cost 70 ms of a 170 ms open in system calls and faults
// (docs/benchmarks.md).
const touchRelease = 1 << 20
