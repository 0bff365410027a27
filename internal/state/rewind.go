package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/state/kv"
)

// A shared ledger (PostgreSQL) can go back in time under batchd: an
// asynchronous standby promoted without the primary's last seconds of
// writes, a point-in-time recovery, a dump restored, a storage snapshot
// rolled back. A batchd that trusted such a database would find rows it
// has paid shown unsent, and pay them again. So every write transaction
// first proves that the database is the one the ledger last wrote to and
// has lost none of what this instance saw (guard):
//   - the database's origin (kv.Origin: system identifier, timeline,
//     database OID), read from the live server inside the transaction, is
//     compared with the one kept in the ledger's meta bucket (keyOrigin):
//     a promotion, a point-in-time recovery and a restored dump all change
//     it, whatever any host remembers;
//   - the ledger's write count is compared with the highest this instance
//     saw (the watermark, watermark.go): a copy rolled back in place keeps
//     its origin, and only the count shows it;
//   - the ledger's instance id is compared with the ones restores
//     replaced: a database put back to before a restore.
//
// A write that finds any of these fails with a RewindError, committing
// nothing: the create its intent was for never leaves. The leader then
// stops every job and readies the ledger again (TakeOver), which applies
// the restore rules (recoverRewind) before any job runs again. A
// promotion that lost nothing (a synchronous standby, a planned
// switchover) changes the origin too: it costs lookups, never a payment.

var (
	// keyOrigin is the origin of the database the ledger last wrote to
	// (kv.Origin, JSON).
	keyOrigin = []byte("origin")
	// keyRewinding is set while the restore rules of a rewind are being
	// applied (Rewind, JSON): every other write is refused until they
	// are, whichever instance finishes them.
	keyRewinding = []byte("rewinding")
)

// ErrRewound is wrapped by a write refused because the ledger's database
// went back in time.
var ErrRewound = errors.New("the ledger's database went back in time")

// Rewind says how the ledger's database went back in time, and what was
// done about it.
type Rewind struct {
	// Cause is what showed it, in a sentence.
	Cause string `json:"cause"`
	// DetectedAt is when the restore rules were first applied (zero in a
	// RewindError: the refused write only saw it).
	DetectedAt time.Time `json:"detected_at,omitzero"`
	// Was and Now are the origin the ledger last wrote to and the live
	// one; equal when the count showed it.
	Was kv.Origin `json:"was"`
	Now kv.Origin `json:"now"`
	// Writes is the ledger's write count found; Seen the highest this
	// instance had seen (zero when it had seen none of this ledger).
	Writes uint64 `json:"writes"`
	Seen   uint64 `json:"seen"`
	// SeenAt is when this instance saw Seen: writes after it may be lost.
	SeenAt time.Time `json:"seen_at,omitzero"`
	// PreviousInstance is the ledger's instance id before the restore
	// rules gave it a new one.
	PreviousInstance string `json:"previous_instance"`
	// InDoubt counts the rows the restore rules put in doubt, to be
	// looked up before any send.
	InDoubt int `json:"rows_put_in_doubt"`
	// Lost says how many writes the database lost, when the count shows
	// it (Seen - Writes); zero when unknown.
	Lost uint64 `json:"writes_lost,omitempty"`
	// pending says the restore rules of this rewind were begun and not
	// finished (keyRewinding is set).
	pending bool
}

// RewindError is a write refused because the ledger's database went back
// in time (errors.Is(err, ErrRewound)).
type RewindError struct{ Rewind Rewind }

func (e *RewindError) Error() string {
	return fmt.Sprintf("%v: %s; nothing was written, and no payment leaves until the restore rules have put every row without a check in doubt to be looked up (the leader does this before its jobs run again)", ErrRewound, e.Rewind.Cause)
}

func (e *RewindError) Unwrap() error { return ErrRewound }

// guard proves, inside write transaction tx of a shared ledger, that the
// database has not gone back in time (see above), then raises the
// ledger's write count and, after the commit, this instance's
// watermark. recovering skips the proof, for the restore rules' own
// writes, which record the live origin.
//
// The proof costs one read of the meta bucket's four guard keys together
// (readGuardMeta) and one write, once per transaction: callers sharing a
// group commit (Batch) after the first find it done (guards).
func (d *DB) guard(tx kv.Tx, recovering bool) error {
	if d.guards.proven(tx.ID()) {
		return nil
	}
	meta := tx.Bucket(bucketMeta)
	live, err := tx.Origin()
	if err != nil {
		return fmt.Errorf("read the database's origin: %w", err)
	}
	if live.IsZero() {
		return fmt.Errorf("the store %s does not say which database it is (kv.Origin), which a shared ledger needs to notice a database that went back in time", d.store.Name())
	}
	m, err := readGuardMeta(meta)
	if err != nil {
		return err
	}
	if !recovering {
		if rw := d.rewound(m, live); rw != nil {
			e := &RewindError{Rewind: *rw}
			if rw.pending {
				e.Rewind.Cause = "the restore rules of an earlier rewind are not finished (" + rw.Cause + ")"
			}
			return e
		}
		if !m.hasOrigin {
			// The first write of a ledger (or of one written before
			// origins were kept, or just copied by migrate-state). The
			// restore rules record the origin they trust themselves
			// (putOrigin).
			if err := putOrigin(meta, live); err != nil {
				return err
			}
		}
	}
	n := m.writes + 1
	if err := meta.Put(keyWrites, u64(n)); err != nil {
		return err
	}
	d.guards.prove(tx.ID())
	tx.OnCommit(func() { d.mark.record(d.Instance(), n) })
	return nil
}

// guardMeta is what the guard reads of the meta bucket.
type guardMeta struct {
	writes    uint64
	instance  string
	origin    kv.Origin
	hasOrigin bool
	rewinding *Rewind // keyRewinding, when set
}

// readGuardMeta reads the meta bucket's guard keys together
// (kv.Bucket.GetMany: one round trip on PostgreSQL, or none when the
// store's cache has them).
func readGuardMeta(meta kv.Bucket) (guardMeta, error) {
	var m guardMeta
	v := meta.GetMany([][]byte{keyWrites, keyInstance, keyOrigin, keyRewinding})
	if len(v[0]) == 8 {
		m.writes = binary.BigEndian.Uint64(v[0])
	}
	m.instance = string(v[1])
	// One that does not decode is as none: the next write records the
	// live one.
	m.hasOrigin = v[2] != nil && json.Unmarshal(v[2], &m.origin) == nil
	if v[3] != nil {
		m.rewinding = &Rewind{}
		if err := json.Unmarshal(v[3], m.rewinding); err != nil {
			return m, fmt.Errorf("meta %q does not decode: %w", keyRewinding, err)
		}
		m.rewinding.pending = true
	}
	return m, nil
}

// rewound says whether the database of a write (origin live, meta m)
// went back in time; nil when it did not.
func (d *DB) rewound(m guardMeta, live kv.Origin) *Rewind {
	if m.rewinding != nil {
		return m.rewinding
	}
	n := m.writes
	seen := d.mark.seen()
	rw := &Rewind{Now: live, Was: live, Writes: n, PreviousInstance: m.instance}
	if seen.Instance == m.instance {
		rw.Seen, rw.SeenAt = seen.Writes, seen.At
	}
	switch {
	case m.hasOrigin && m.origin != live:
		rw.Was = m.origin
		rw.Cause = fmt.Sprintf("the database is not the one the ledger last wrote to (it was %s, it is %s): a standby promoted, a point-in-time recovery or a restored dump, which may have lost the last writes", m.origin, live)
	case rw.Seen > n:
		rw.Cause = fmt.Sprintf("the ledger's write count %d is below the %d this instance saw at %s: the database lost %d writes", n, rw.Seen, rw.SeenAt.UTC().Format(time.RFC3339), rw.Seen-n)
	case slices.Contains(d.previousInstances(), m.instance) && m.instance != d.Instance():
		rw.Cause = fmt.Sprintf("the ledger is instance %s again, which a restore replaced by %s: the database was put back to before that restore", m.instance, d.Instance())
	default:
		return nil
	}
	if rw.Seen > n {
		rw.Lost = rw.Seen - n
	}
	return rw
}

// recoverRewind applies the restore rules when the ledger's database went
// back in time, as TakeOver's first step: in one write it records the
// rewind (keyRewinding, which refuses every other write until it is
// removed) and the live origin; it puts every row without a check, and
// every funding row without a result, in doubt, with a send-by deadline
// one send window from now, so that no lookup releases a row before a
// create that an intent the database lost allowed could have left; and it
// gives the ledger a new instance id and the restored mark, removing
// keyRewinding in the same write. A crash midway leaves keyRewinding: the
// next leader's TakeOver finishes the work. It returns nil when the
// database did not go back.
func (d *DB) recoverRewind() (*Rewind, error) {
	if d.file != nil {
		return nil, nil // a file's older copy is refused at Open (open.go)
	}
	now := d.now().UTC()
	var rw *Rewind
	err := d.recovery(func(tx kv.Tx) error {
		live, err := tx.Origin()
		if err != nil {
			return err
		}
		meta := tx.Bucket(bucketMeta)
		m, err := readGuardMeta(meta)
		if err != nil {
			return err
		}
		if rw = d.rewound(m, live); rw == nil {
			return nil
		}
		if rw.DetectedAt.IsZero() {
			rw.DetectedAt = now
		}
		raw, _ := json.Marshal(rw)
		if err := meta.Put(keyRewinding, raw); err != nil {
			return err
		}
		return putOrigin(meta, live)
	})
	if err != nil || rw == nil {
		return nil, err
	}
	// Creates may have left under intents the database lost since the
	// last write this instance saw, or since it was told of none, now.
	at := rw.DetectedAt
	if !rw.SeenAt.IsZero() && rw.SeenAt.Before(at) {
		at = rw.SeenAt
	}
	n, err := d.suspectAll(d.recovery, at, rw.DetectedAt.Add(d.sendWindow), "the ledger's database went back in time")
	if err != nil {
		return nil, fmt.Errorf("put rows in doubt after the database went back in time: %w", err)
	}
	rw.InDoubt = n
	mark := RestoreMark{SnapshotAt: at, RestoredAt: rw.DetectedAt, From: ErrRewound.Error() + ": " + rw.Cause, PreviousInstance: rw.PreviousInstance, RowsInDoubt: n}
	if err := d.finishRestore(d.recovery, &mark, 0); err != nil {
		return nil, fmt.Errorf("record the restore after the database went back in time: %w", err)
	}
	d.replaced(mark)
	return rw, nil
}

// recovery runs fn as one of the restore rules' writes: fenced, but
// without the guard's proof, which they are there to satisfy.
func (d *DB) recovery(fn func(kv.Tx) error) error {
	return d.writeWith(d.store.Update, fn, true)
}

// putOrigin records the origin the ledger now trusts.
func putOrigin(meta kv.Bucket, o kv.Origin) error {
	raw, _ := json.Marshal(o)
	return meta.Put(keyOrigin, raw)
}

func writeCount(meta kv.Bucket) uint64 {
	if raw := meta.Get(keyWrites); len(raw) == 8 {
		return binary.BigEndian.Uint64(raw)
	}
	return 0
}

// LogMessage is the log line of a rewind the restore rules were applied
// for; LogAttrs its fields: what showed it, the writes lost when the
// count tells, the rows put in doubt.
const LogMessage = "the ledger's database went back in time: every row without a check was put in doubt, and is looked up before any send"

// LogAttrs are a Rewind's fields for a log line (slog key-value pairs).
func (rw *Rewind) LogAttrs() []any {
	return []any{"cause", rw.Cause, "rows_put_in_doubt", rw.InDoubt, "writes", rw.Writes, "writes_seen", rw.Seen,
		"writes_lost", rw.Lost, "origin_was", rw.Was.String(), "origin_now", rw.Now.String(),
		"previous_instance", rw.PreviousInstance}
}

// txGuards remembers the write transactions in progress whose database
// the guard proved and whose write count it raised, so that the callers
// sharing a group commit after the first neither read the meta bucket
// nor prove again: the first did, in the same transaction, and one raise
// of the count per transaction is what the watermark follows. writeWith
// forgets a transaction once it has ended.
type txGuards struct {
	mu  sync.Mutex
	ids map[int]bool
}

func (g *txGuards) proven(id int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ids[id]
}

func (g *txGuards) prove(id int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ids == nil {
		g.ids = map[int]bool{}
	}
	g.ids[id] = true
}

// done forgets transaction id, which has ended.
func (g *txGuards) done(id int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.ids, id)
}
