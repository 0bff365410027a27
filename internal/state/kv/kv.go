// Package kv is the storage contract beneath batchd's ledger: an ordered,
// transactional key-value store of named, flat buckets, the shape bbolt
// has. internal/state writes every rule of the ledger (lifecycles, check
// ownership, identity, retention, restore, events, invariants) once, over
// this contract; internal/state/bolt and internal/state/postgres implement
// it, so a second backend never copies a rule.
//
// The contract is small on purpose, and strict:
//
//   - Keys sort bytewise; a cursor walks them in that order.
//   - A transaction sees its own writes. Update and Batch transactions are
//     serialised: each commits as if no other write transaction of the
//     ledger, in any process, ran between its first read and its commit,
//     so a rule may read, decide and write without a race (bbolt has one
//     writer; PostgreSQL takes a lock, from the first statement, or for a
//     Batch at the commit, after checking that nothing it read changed).
//   - A present key with an empty value reads as a non-nil empty slice;
//     an absent key reads as nil.
//   - A store that meets an error inside a transaction (a dropped
//     connection) makes every later read of that transaction answer
//     "absent" and fails the transaction with that error, whatever fn
//     returns: a decision made on a failed read is never committed.
//     Values returned by Get and cursors are valid only during the
//     transaction.
package kv

import (
	"errors"
	"fmt"
)

// Store is one ledger's storage.
type Store interface {
	// View runs fn in a read-only transaction.
	View(fn func(Tx) error) error
	// Update runs fn in a write transaction and commits it when fn
	// returns nil. On a store that fences (PostgreSQL under a leader
	// lease), it fails with ErrFenced, committing nothing, unless this
	// instance holds the current lease.
	Update(fn func(Tx) error) error
	// Batch is Update through group commit: fn may share one commit with
	// other callers' and may be run more than once, so it must have no
	// effect outside the transaction. A run that does not commit may
	// have read present keys as absent (PostgreSQL runs a batch once to
	// learn which keys to read together, then again on them): only the
	// run that commits, or the error Batch returns, counts.
	Batch(fn func(Tx) error) error
	// UpdateUnfenced is Update without the lease check, for writes a
	// standby may make (webhook events, idempotent by id) and for the
	// schema set-up at open. Never for a row's state.
	UpdateUnfenced(fn func(Tx) error) error
	// Name names the store for messages: a file path, or a database
	// without its credentials.
	Name() string
	Close() error
}

// Tx is one transaction.
type Tx interface {
	// Bucket is the named bucket, or nil when it does not exist.
	Bucket(name []byte) Bucket
	CreateBucketIfNotExists(name []byte) (Bucket, error)
	DeleteBucket(name []byte) error
	// DeclarePrune declares this write transaction a prune: it may remove
	// the keys that name a check's or a funding source's owner (buckets
	// checks and src_ids). A store that guards ownership itself
	// (PostgreSQL) refuses such a removal in any other transaction, so
	// that a delete and a new insert cannot move an id to another row; a
	// store with no such guard (bbolt) accepts the call and does nothing.
	// It fails in a read-only transaction.
	DeclarePrune() error
	// ForEachBucket calls fn with every bucket's name, in order.
	ForEachBucket(fn func(name []byte) error) error
	// OnCommit runs fn after the transaction commits (never after a
	// rollback).
	OnCommit(fn func())
	// ID identifies the transaction; callers sharing one Batch commit see
	// the same ID.
	ID() int
	Writable() bool
	// Release is a hint, for a long read, that the pages read so far
	// need not stay in the process's memory: a store that maps its file
	// (bbolt) lets the kernel drop the mapping's resident pages (the page
	// cache keeps the data; the next read faults it back in), so that a
	// scan of a large ledger does not leave the whole file counted in
	// the process's RSS. It never changes what any transaction reads. In
	// a write transaction, and on stores that map nothing (PostgreSQL),
	// it does nothing. Callers hint every few thousand rows, not per row.
	Release()
	// Origin says which database this write transaction runs on, read
	// from the live server inside the transaction (see Origin). A store
	// that is one file answers the zero Origin: a file has no server,
	// and its older copies are told apart by the state directory's
	// marker when it is opened. In a read-only transaction it fails.
	Origin() (Origin, error)
}

// Origin identifies a database server's copy of a ledger, so that a
// ledger can tell when it is no longer on the database it last wrote to:
// a standby promoted in its place (a new timeline), a point-in-time
// recovery (a new timeline), a dump restored into another cluster or
// database (another system identifier or database OID). A copy that keeps
// all three (a storage snapshot rolled back in place) is not told apart
// by its Origin; the ledger's write count is the defence there.
type Origin struct {
	// System is the cluster's system identifier (pg_control_system()),
	// shared by a primary and the standbys made from it.
	System uint64 `json:"system"`
	// Timeline is the server's current WAL timeline, raised by every
	// promotion and point-in-time recovery.
	Timeline uint64 `json:"timeline"`
	// Database is the OID of the ledger's database in that cluster.
	Database uint64 `json:"database"`
}

// IsZero reports whether o names no server (a file's store).
func (o Origin) IsZero() bool { return o == Origin{} }

// String says it for messages: "system 7301… timeline 2 database 16384".
func (o Origin) String() string {
	return fmt.Sprintf("system %d timeline %d database %d", o.System, o.Timeline, o.Database)
}

// Bucket is one bucket, inside one transaction.
type Bucket interface {
	Get(key []byte) []byte
	// GetMany is Get of each key, answered in the keys' order: on a
	// store a network away (PostgreSQL) one round trip for them all, not
	// one each. A caller that reads many keys it knows beforehand (the
	// rows an index names) asks for them together.
	GetMany(keys [][]byte) [][]byte
	Put(key, value []byte) error
	Delete(key []byte) error
	Cursor() Cursor
	// ForEach calls fn for every key in order; fn must not write the
	// bucket.
	ForEach(fn func(k, v []byte) error) error
	// NextSequence raises the bucket's sequence and returns it.
	NextSequence() (uint64, error)
	Sequence() uint64
	SetSequence(v uint64) error
	// KeyN counts the keys.
	KeyN() int
	// FillPercent is a hint that keys will be put in increasing order,
	// for this transaction: a paged store (bbolt) fills its pages up to
	// the given fraction instead of half. Stores without pages ignore it.
	FillPercent(f float64)
}

// Cursor walks one bucket in key order. At the end, or on an error, it
// returns a nil key.
type Cursor interface {
	First() (key, value []byte)
	// Seek moves to the first key at or after seek.
	Seek(seek []byte) (key, value []byte)
	Next() (key, value []byte)
	// Delete removes the key the cursor is on; Next then moves to the
	// key after it.
	Delete() error
}

// ErrFenced is returned by a fenced write on an instance that does not
// hold the current leader lease: another instance took over, and nothing
// this one decided may be recorded.
var ErrFenced = errors.New("not the leader: another instance holds the ledger's lease")
