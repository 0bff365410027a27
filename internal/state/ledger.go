package state

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/webhook"
)

// Ledger is the whole contract between batchd's jobs and its ledger:
// everything a job, the daemon or a command reaches, in one interface, so
// that a backend either offers all of it or does not compile. Jobs hold a
// Ledger and never ask a ledger by type assertion whether it has a
// feature: a backend that silently lacked one would change what batchd
// does with money (onboarding switched off, no outbox names reserved, a
// restore mark never cleared).
//
// The domain packages define what each of them needs (payment.Ledger,
// funding.Ledger, webhook.Store, onboard.ResultsLedger, …) and Ledger
// composes them; internal/jobs checks at compile time that a Ledger
// satisfies each domain interface it is handed to.
//
// A capability a backend cannot offer is still a method: it returns an
// error wrapping ErrUnsupported that says what to do instead (see
// Snapshotter), never a silent skip.
type Ledger interface {
	// payment.Ledger: payment rows and their lifecycle, batches, files by
	// content, job times, payee memory, Ping, Path and Close.
	payment.Ledger
	// funding.Ledger: funding-source and verification rows.
	funding.Ledger
	EventLedger
	Retention
	Restorer
	Snapshotter
	// Leadership elects the instance that runs jobs (leader.go).
	Leadership
	// TakeOver readies the ledger for a new leader: the restore rules
	// when its database went back in time (rewind.go), half-loaded
	// batches discarded, rows left in flight (payment and funding) put in
	// doubt (store.go).
	TakeOver() (TakeOverReport, error)
	// SealAccounts seals every full account number in the clear or under
	// an older key under the ring's newest, and names the rows whose
	// number does not open (reseal.go): batchd rekey.
	SealAccounts() (SealReport, error)
	// MarkKeyLost rejects the rows never sent whose account number no key
	// opens (keylost.go): batchd keylost.
	MarkKeyLost() ([]string, error)
	// UseAccountKeys swaps in a key ring read again from its file, when it
	// holds the key the ledger's rows are sealed under; SealingKey is that
	// key's id (sealkey.go). An instance whose ring lacks it must not lead.
	UseAccountKeys(ring *acctseal.Ring, leading bool) error
	SealingKey() (uint32, error)
	// Instance is this ledger's identity: it names the instance's claim
	// folder on the SFTP server and is part of every batch label
	// (batchd-<instance>-<batch>). A restore gives the ledger a new one.
	Instance() string
}

// EventLedger keeps the webhook events the receiver records.
type EventLedger interface {
	// webhook.Store: Record makes an event durable, once per event id.
	webhook.Store
	// RecordEvent is Record, also saying which final status, if any, the
	// event moved its check's row to.
	RecordEvent(ctx context.Context, e webhook.Event) (duplicate bool, final payment.Status, err error)
	// UnknownEvents lists the events received at or after since about
	// checks or sources no row owned when they arrived, for reconcile.
	UnknownEvents(since time.Time) ([]EventRecord, error)
	// PruneEvents forgets the events received before before, and returns
	// how many.
	PruneEvents(before time.Time) (int, error)
}

// Retention removes finished batches from the ledger after archive hands
// each one's rows to the caller (the archive report), so that nothing is
// forgotten unrecorded.
type Retention interface {
	// Prune removes the finished payment batches whose last change is
	// before before.
	Prune(ctx context.Context, before time.Time, archive Archiver) (PruneSummary, error)
	// PruneSources does the same for funding-source and verification
	// batches.
	PruneSources(ctx context.Context, before time.Time, archive SourceArchiver) (PruneSummary, error)
}

// Restorer is the ledger's restore mark: set by a restore from a
// snapshot (rows without a check become suspect), kept until a reconcile
// whose window covers the snapshot's date to the restore completes.
type Restorer interface {
	// Restored returns the mark, or nil when the ledger was not restored
	// (or the mark was cleared).
	Restored() (*RestoreMark, error)
	// ClearRestored removes the mark.
	ClearRestored() error
}

// Snapshotter takes the ledger's own backups.
type Snapshotter interface {
	// Backup writes a checked snapshot of the open ledger to path. A
	// backend whose backups are the database's business (PostgreSQL:
	// pg_dump, point-in-time recovery) returns ErrNoFileSnapshot, which
	// wraps ErrUnsupported.
	Backup(path string) (*Backup, error)
}

// ErrUnsupported is wrapped by the error of a Ledger method whose
// capability the ledger's backend does not offer. The error's text says
// what to do instead; a caller never treats it as success.
var ErrUnsupported = errors.New("not offered by this ledger's backend")

// Unsupported returns the error of op on a backend that cannot do it,
// wrapping ErrUnsupported: "file snapshot: not offered by this ledger's
// backend: the ledger is on PostgreSQL; …".
func Unsupported(op, instead string) error {
	return fmt.Errorf("%s: %w: %s", op, ErrUnsupported, instead)
}

// ErrNoFileSnapshot is Backup's error on a ledger kept in PostgreSQL:
// a file snapshot of one process's view is not how a database is backed
// up, and a half-done imitation would be trusted at restore time.
var ErrNoFileSnapshot = Unsupported("file snapshot",
	"the ledger is on PostgreSQL; back it up with pg_dump or point-in-time recovery (README, Operating guide), not with batchd backup")

// Every ledger batchd opens keeps the whole contract.
var _ Ledger = (*DB)(nil)
