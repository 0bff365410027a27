package bolt

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/batchd/batchd/internal/state/kv"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// A damaged or missing ledger is refused, never reset. A ledger file that
// is not whole and readable (a 0-byte, truncated or unreadable file, one
// whose tree is damaged) is an error wrapping ErrUnusable that names the
// file and what is wrong. Which readable ledger is the right one (the
// marker's instance and generation, a snapshot put in place by hand) is
// the ledger's rule, in internal/state: Open runs it as its read.

// ErrLocked is returned when another process holds the ledger file.
var ErrLocked = errors.New("state is locked by another batchd process")

// ErrUnusable is wrapped by the refusals of a ledger file that will not
// be used: missing while the marker says one existed, empty, truncated,
// damaged, another installation's, a snapshot, or older than the one
// last used.
var ErrUnusable = errors.New("the ledger cannot be used")

// ErrNoLedger is wrapped when the state directory holds no ledger at all
// and the caller may not make one.
var ErrNoLedger = errors.New("no ledger")

// Refusal builds the error for a ledger file that will not be used.
func Refusal(path, what string) error {
	return fmt.Errorf("%w: %s %s. batchd never starts a new ledger over a lost or damaged one: "+
		"run `batchd check` for a diagnosis and `batchd restore --from SNAPSHOT` to install the last good snapshot", ErrUnusable, path, what)
}

// Options tunes Open.
type Options struct {
	// Timeout bounds the wait for the file lock.
	Timeout time.Duration
	// GroupCommitDelay is bbolt's MaxBatchDelay for Batch.
	GroupCommitDelay time.Duration
	// Create allows a file that does not exist yet: bbolt makes it.
	Create bool
}

// Open opens the ledger file at path: it checks the header first, opens
// under guard, and walks the whole tree (refusing a damaged one) before
// anything is written; then it runs read in a read transaction of the
// file, whose error refuses it (as it is when it wraps ErrUnusable, else
// as a refusal naming the file). The file is forced to mode 0600.
func Open(path string, o Options, read func(kv.Tx) error) (*Store, error) {
	if !o.Create {
		if _, err := preflight(path); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("open state %s: %w", path, err)
			}
			if lockedByOther(path) {
				return nil, fmt.Errorf("open state %s: %w; stop the other process or point state_dir elsewhere", path, ErrLocked)
			}
			return nil, Refusal(path, err.Error())
		}
	}
	b, err := openLocked(path, o.Timeout)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		b.Close()
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	if err := Verify(path); err != nil {
		b.Close()
		return nil, Refusal(path, err.Error())
	}
	if err := readChecked(b, read); err != nil {
		b.Close()
		if errors.Is(err, ErrUnusable) {
			return nil, err
		}
		return nil, Refusal(path, err.Error())
	}
	b.MaxBatchDelay = o.GroupCommitDelay
	return New(b), nil
}

// openLocked opens path with bbolt for writing, waiting up to timeout for
// its lock, and turns bbolt's refusals into the ledger's.
func openLocked(path string, timeout time.Duration) (*bolt.DB, error) {
	b, err := boltOpen(path, bolt.Options{Timeout: timeout})
	if errors.Is(err, bolterrors.ErrInvalid) {
		// The file this open waited on may have been replaced meanwhile
		// (a compaction renames a new file over the ledger and spoils
		// the old one's header): open the one the path names now, once.
		if _, perr := preflight(path); perr == nil {
			b, err = boltOpen(path, bolt.Options{Timeout: timeout})
		}
	}
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("open state %s: %w (waited %s); stop the other process or point state_dir elsewhere", path, ErrLocked, timeout)
	}
	if err != nil {
		if errors.Is(err, bolterrors.ErrInvalid) || errors.Is(err, bolterrors.ErrChecksum) || errors.Is(err, bolterrors.ErrVersionMismatch) || errors.As(err, new(damage)) {
			return nil, Refusal(path, "cannot be opened: "+err.Error())
		}
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	return b, nil
}

// readChecked walks b's tree (structure) and, only when it is sound,
// runs read in the same read transaction.
func readChecked(b *bolt.DB, read func(kv.Tx) error) error {
	var faults []string
	err := b.View(func(tx *bolt.Tx) error {
		faults = structure(tx, 5)
		if len(faults) > 0 {
			return nil
		}
		return Guarded(func() error { return read(Tx(tx)) })
	})
	if err == nil && len(faults) > 0 {
		err = fmt.Errorf("is damaged: %s", faults[0])
		if len(faults) > 1 {
			err = fmt.Errorf("%w (and %d more faults)", err, len(faults)-1)
		}
	}
	return err
}

// Inspect checks the ledger (or snapshot) file at path without writing
// it: its header and length, its page tree, bbolt's own consistency check
// (Tx.Check), and then, only on a sound tree, whatever read checks in a
// read transaction of it. Each thing wrong with the file goes to fault
// (at most limit from bbolt's check). An error means the file could not
// be checked at all: a process holds it (ErrLocked). It never panics on a
// damaged file.
func Inspect(path string, limit int, fault func(what string), read func(kv.Tx) error) error {
	if _, err := preflight(path); err != nil {
		if lockedByOther(path) { // read while a writer was at it
			return fmt.Errorf("check %s: %w", path, ErrLocked)
		}
		fault(err.Error())
		return nil
	}
	b, err := boltOpen(path, bolt.Options{ReadOnly: true, Timeout: 200 * time.Millisecond})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return fmt.Errorf("check %s: %w", path, ErrLocked)
	}
	if err != nil {
		fault("cannot be opened: " + err.Error())
		return nil
	}
	defer b.Close()
	if err := Verify(path); err != nil {
		fault(err.Error())
		return nil
	}
	err = Guarded(func() error {
		return b.View(func(btx *bolt.Tx) error {
			faults := structure(btx, limit)
			for _, f := range faults {
				fault(f)
			}
			if len(faults) > 0 {
				return nil // a tree that faults is not read further
			}
			return Guarded(func() error { return read(Tx(btx)) })
		})
	})
	if err != nil {
		fault("reading stopped: " + err.Error())
	}
	return nil
}

// UpdateFile runs fn in one write transaction of the file at path, which
// no process holds, under guard.
func UpdateFile(path string, fn func(kv.Tx) error) error {
	b, err := boltOpen(path, bolt.Options{Timeout: time.Second})
	if err != nil {
		return err
	}
	err = Guarded(func() error {
		return b.Update(func(tx *bolt.Tx) error { return fn(Tx(tx)) })
	})
	return errors.Join(err, b.Close())
}

// Lock takes the ledger file's lock as bbolt does (flock), so that no
// batchd opens it meanwhile; it fails at once, with an error wrapping
// ErrLocked, if a process holds it. A missing file needs no lock.
func Lock(path string) (unlock func(), err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
