package payment

import (
	"errors"
	"time"
)

// RowReader reads rows and batches. Scans call fn with each row until fn
// returns false or an error; a row passed to fn is the caller's to keep.
type RowReader interface {
	Row(k RowKey) (*Row, error)
	// CheckOwners says which rows own the given check ids, in one read.
	CheckOwners(ids []string) (map[string]RowKey, error)
	// OwnerRows returns the rows that own the given check ids, by id, in
	// one read: a reconcile page compares 100 listed checks with their
	// rows, and a read per row would cost 100 transactions (on PostgreSQL,
	// 100 round trips) a page.
	OwnerRows(ids []string) (map[string]*Row, error)
	// RowsByKey returns the rows under keys, in the keys' order, in one
	// read: reconcile's status report reads together the rows it did not
	// keep, where a read per row would cost a round trip each on
	// PostgreSQL. A key with no row fails it, wrapping ErrNotFound, as
	// Row does.
	RowsByKey(keys []RowKey) ([]*Row, error)
	// Rows scans one batch's rows in line order.
	Rows(batch uint64, fn func(*Row) (bool, error)) error
	// OpenRows scans rows that have no check yet (pending, in flight, in
	// doubt), in batch and line order.
	OpenRows(fn func(*Row) (bool, error)) error
	// TrackedRows scans rows whose check is not final.
	TrackedRows(fn func(*Row) (bool, error)) error
	Batch(id uint64) (*Batch, error)
	Batches() ([]Batch, error)
}

// RowWriter drives rows through their lifecycle. Each method applies one
// Transition atomically and durably, and refuses (wrapping ErrIllegal) a
// transition that may not start from the row's current state: that refusal
// is the lock that keeps two jobs from changing one row in doubt at once.
// Any failure to read or write the store wraps ErrLedger.
type RowWriter interface {
	// Send marks a pending row in flight. When it returns nil the intent
	// is durable, and only then may the create request leave.
	Send(k RowKey) (*Row, error)
	// Created binds a check to a row in flight or in doubt. It refuses
	// (ErrCheckOwned) a check another row owns.
	Created(k RowKey, res CheckResult) (*Row, error)
	Reject(k RowKey, message string) (*Row, error)
	Doubt(k RowKey, reason string) (*Row, error)
	// Release returns a row in flight or in doubt to pending: its create
	// certainly made no check.
	Release(k RowKey, reason string) (*Row, error)
	// RecoverInFlight puts every row left in flight by an earlier process
	// in doubt, and returns how many.
	RecoverInFlight() (int, error)
	// ObserveStatuses records check statuses seen at the service, in one
	// transaction; a final status never changes. It returns the rows it
	// changed.
	ObserveStatuses(obs []Observation, at time.Time) (map[RowKey]*Row, error)
	// Voided records that batchd voided the row's check itself.
	Voided(k RowKey, reason string) error
	// ResultsReported stamps a batch's results report as delivered.
	ResultsReported(batch uint64) error
}

// Loader writes one file's rows. Nothing of the batch is visible to submit
// until Commit; Reject and Abort leave no row behind.
type Loader interface {
	Batch() Batch
	Add(line int, p Payment) error
	// AddMarked is Add with the row's payee mark; a row the mark holds
	// (PayeeMark.Held) is loaded Held.
	AddMarked(line int, p Payment, m PayeeMark) error
	Commit(rows, invalid int) (Batch, error)
	Reject(rows, invalid int, reason string) (Batch, error)
	Abort() error
}

// FileLedger remembers files by content, so that the same content is
// never ingested twice.
type FileLedger interface {
	// BeginBatch starts loading a file; it returns ErrDuplicate for
	// content already ingested.
	BeginBatch(m FileMeta) (Loader, error)
	FileReader
	FileMoved(sha256, path string) error
}

// JobLedger remembers when each job last succeeded, for the daemon's
// catch-up of missed runs.
type JobLedger interface {
	LastSuccess(job string) (time.Time, bool, error)
	RecordSuccess(job string, at time.Time) error
}

// Ledger is everything batchd keeps. internal/state implements it on
// bbolt; a second backend implements the same interface.
type Ledger interface {
	RowReader
	RowWriter
	FileLedger
	JobLedger
	PayeeLedger
	// LostLedger: the checks of batches the ledger lost when its
	// database went back in time, which reconcile records and ingest
	// reads.
	LostLedger
	// LineLedger: the records of the lines of applied files, each
	// kind's in its own bucket (LineStore).
	LineLedger
	// RowEditor: the rows edit files change.
	RowEditor
	// BankLedger: the bank directory's answers, by routing number.
	BankLedger
	// TokenLedger: the tokens of payees' accounts (api.accounts:
	// tokenize).
	TokenLedger
	// Ping proves the ledger can be read, for /healthz.
	Ping() error
	// Path names the ledger for messages (a file, or a database).
	Path() string
	Close() error
}

// ErrLedger is wrapped by every failure to read or write the ledger (a
// full disk, an I/O error, a damaged file), as opposed to a refusal such
// as ErrIllegal. A job that meets it stops: it can no longer record what
// it does, and a payment whose intent is not durable must not be made.
var ErrLedger = errors.New("ledger failure")

// LedgerError is a failure to read or write the ledger.
type LedgerError struct {
	Op   string // "read" or "write"
	Path string // the ledger
	Err  error
}

// Error says what failed and why, in one line: "cannot write the ledger
// /var/lib/batchd/batchd.db: no space left on device".
func (e *LedgerError) Error() string {
	return "cannot " + e.Op + " the ledger " + e.Path + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *LedgerError) Unwrap() error { return e.Err }

// Is makes every LedgerError match ErrLedger.
func (e *LedgerError) Is(target error) bool { return target == ErrLedger }

// Rows reads and drives rows: what submit and the resolver need.
type Rows interface {
	RowReader
	RowWriter
}
