package state

import (
	"path/filepath"
	"time"

	boltkv "github.com/batchd/batchd/internal/state/bolt"
)

// Compaction gives a ledger file's free pages back to the file system
// (internal/state/bolt's compact.go says how). A ledger in PostgreSQL has
// no file: its database's own maintenance (VACUUM) does this.

// CompactSuffix names the file Compact writes beside the ledger before
// renaming it over the ledger; one left behind by an interrupted
// compaction is a partial copy, which the next Compact removes.
const CompactSuffix = boltkv.CompactSuffix

// CompactResult says what Compact did.
type CompactResult = boltkv.CompactResult

// Compact rewrites the ledger in the state directory dir into a new file
// holding only its live pages, and renames that over the ledger. It needs
// the ledger to itself (ErrLocked while a batchd holds it).
func Compact(dir string, timeout time.Duration) (CompactResult, error) {
	return boltkv.Compact(filepath.Join(dir, FileName), timeout)
}
