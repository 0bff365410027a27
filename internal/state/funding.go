package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
	"github.com/batchd/batchd/internal/state/kv"
)

// Funding-source rows (internal/funding) are kept as payment rows are, in
// buckets of their own: src_rows holds each row (JSON: these files are
// small, and a funding row has fields a payment row's codec does not),
// src_open and src_track index the rows without a result and the rows
// whose source status is Tracked, and src_ids maps each source id to the
// one row that owns it. They move through the same payment.Transition
// table, their batches keep the same Counts, and only OpenSourceRows and
// TrackedSourceRows (never OpenRows or TrackedRows) yield them.

// ErrWrongKind is wrapped when a row is added to a batch of another kind
// (a payment to a funding-source batch, a funding request to a payment
// batch, a verification to a funding-source batch), or a batch of an
// unknown kind is begun: a file must never be half one kind and half
// another, and a payment job must never see a funding row.
var ErrWrongKind = errors.New("row of the wrong kind for its batch")

// The history steps of funding rows that record something without moving
// the row. Their rules are the funding.Ledger's: CustomerFound on a row in
// flight or in doubt, Initiated on a submitted row.
const (
	// ViaCustomer records the row's customer, created or found.
	ViaCustomer payment.Transition = "customer"
	// ViaInitiate records micro-deposit initiation, or why it cannot be.
	ViaInitiate payment.Transition = "initiate"
)

// keepRules are the states each step that keeps the row's state may start
// from.
var keepRules = map[payment.Transition][]payment.RowState{
	ViaCustomer: {payment.InFlight, payment.InDoubt},
	ViaInitiate: {payment.Submitted},
}

type pendingSource struct {
	line uint32
	r    funding.Request
}

// AddSource queues one valid row of a funding-source or verification
// file; it is written with the next chunk. A funding-source batch takes
// every method but funding.Verify, a verification batch only Verify, so
// that a verification is never indexed as its source's owner.
func (l *Loader) AddSource(line int, r funding.Request) error {
	switch {
	case l.batch.Kind.Payments():
		return fmt.Errorf("batch %d (%s): %w: a payment file takes payments, not funding-source requests", l.batch.ID, l.meta.Name, ErrWrongKind)
	case l.batch.Kind == payment.KindVerifications && r.Method != funding.Verify:
		return fmt.Errorf("batch %d (%s) line %d: %w: a verification file takes only verifications, not %q", l.batch.ID, l.meta.Name, line, ErrWrongKind, r.Method)
	case l.batch.Kind == payment.KindSources && r.Method == funding.Verify:
		return fmt.Errorf("batch %d (%s) line %d: %w: a verification belongs in a verification file", l.batch.ID, l.meta.Name, line, ErrWrongKind)
	}
	l.src = append(l.src, pendingSource{uint32(line), r})
	if len(l.src) >= l.d.chunk {
		return l.flushSources()
	}
	return nil
}

// flushSources writes the queued funding rows in one transaction, pending
// and in the open index, as the payment loader does.
func (l *Loader) flushSources() error {
	if len(l.src) == 0 {
		return nil
	}
	at := l.d.now().UTC()
	err := l.d.update(func(tx kv.Tx) error {
		for _, ps := range l.src {
			r := &funding.Row{Key: payment.RowKey{Batch: l.batch.ID, Line: ps.line}, State: payment.Pending, Request: ps.r,
				History: []payment.Step{{At: at, State: payment.Pending, Note: "ingested"}}}
			if err := putSource(tx, r); err != nil {
				return err
			}
			if err := tx.Bucket(bucketSrcOpen).Put(keyBytes(r.Key), []byte(payment.Pending)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load rows of %s: %w", l.meta.Name, err)
	}
	l.n += len(l.src)
	l.src = l.src[:0]
	return nil
}

func getSource(tx kv.Tx, k payment.RowKey) (*funding.Row, error) {
	raw := tx.Bucket(bucketSrcRows).Get(keyBytes(k))
	if raw == nil {
		return nil, fmt.Errorf("funding row %s: %w", k, payment.ErrNotFound)
	}
	return decodeSource(k, raw)
}

func decodeSource(k payment.RowKey, raw []byte) (*funding.Row, error) {
	r := &funding.Row{}
	if err := json.Unmarshal(raw, r); err != nil {
		return nil, fmt.Errorf("decode funding row %s: %w", k, err)
	}
	r.Key = k
	return r, nil
}

func putSource(tx kv.Tx, r *funding.Row) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketSrcRows).Put(keyBytes(r.Key), raw)
}

// sourceTracked is the track index's rule: a submitted row whose source's
// status still moves on by itself.
func sourceTracked(r *funding.Row) bool { return r.State == payment.Submitted && r.Status.Tracked() }

// ownsSource reports whether r owns the source it names: a Verify row
// names a source another row created, and never owns it.
func ownsSource(r *funding.Row) bool { return r.SourceID != "" && r.Request.Method != funding.Verify }

// applySource runs transition t on the funding row under k inside tx, as
// apply does for payment rows: t is a payment.Transition (its table
// decides the next state) or a step of keepRules (the state stays).
// mutate may adjust the row; the history step, the indexes and the batch
// counts are kept here.
func (d *DB) applySource(tx kv.Tx, k payment.RowKey, t payment.Transition, note string, mutate func(*funding.Row) error) (*funding.Row, error) {
	r, err := getSource(tx, k)
	if err != nil {
		return nil, err
	}
	next, err := nextSource(t, r.State)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k, err)
	}
	before := r.State
	r.State = next
	if mutate != nil {
		if err := mutate(r); err != nil {
			return nil, err
		}
	}
	at := d.now().UTC().Truncate(time.Millisecond)
	r.History = append(r.History, payment.Step{At: at, State: r.State, CheckStatus: payment.Status(r.Status), Note: note, Via: t})
	if !r.State.Open() {
		// A token is exchanged once; a row with a result never sends
		// it again, and a credential is not kept longer than needed. The
		// same holds for the account number, as for payment rows: only
		// the digits a report may show remain.
		r.Request.ProcessorToken = ""
		if r.Request.Account != "" {
			r.Request.AccountLast4 = redact.Last4(r.Request.Account)
			r.Request.Account = ""
		}
	}
	if err := d.indexSource(tx, r); err != nil {
		return nil, err
	}
	if err := putSource(tx, r); err != nil {
		return nil, err
	}
	if before != r.State {
		if err := bumpCounts(tx, k.Batch, before, r.State); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// nextSource is t.Next, with the steps that keep the state.
func nextSource(t payment.Transition, from payment.RowState) (payment.RowState, error) {
	starts, ok := keepRules[t]
	if !ok {
		return t.Next(from)
	}
	for _, s := range starts {
		if s == from {
			return from, nil
		}
	}
	return "", fmt.Errorf("%w: %s from %s", payment.ErrIllegal, t, from)
}

// indexSource keeps src_open, src_track and src_ids in step with r. It
// refuses (payment.ErrCheckOwned) a source id another row owns.
func (d *DB) indexSource(tx kv.Tx, r *funding.Row) error {
	key := keyBytes(r.Key)
	open, track := tx.Bucket(bucketSrcOpen), tx.Bucket(bucketSrcTrack)
	if r.State.Open() {
		if err := open.Put(key, []byte(r.State)); err != nil {
			return err
		}
	} else if err := open.Delete(key); err != nil {
		return err
	}
	if sourceTracked(r) {
		if err := track.Put(key, nil); err != nil {
			return err
		}
	} else if err := track.Delete(key); err != nil {
		return err
	}
	if !ownsSource(r) {
		return nil
	}
	ids := tx.Bucket(bucketSrcIDs)
	if prev := ids.Get([]byte(r.SourceID)); prev != nil && keyFrom(prev) != r.Key {
		return fmt.Errorf("%s: funding source %s: %w: %s", r.Key, r.SourceID, payment.ErrCheckOwned, keyFrom(prev))
	}
	return ids.Put([]byte(r.SourceID), key)
}

// SourceRow returns one funding row.
func (d *DB) SourceRow(k payment.RowKey) (*funding.Row, error) {
	var r *funding.Row
	err := d.view(func(tx kv.Tx) (err error) {
		r, err = getSource(tx, k)
		return err
	})
	return r, err
}

// SourceRows calls fn for each funding row of a batch in line order, until
// fn returns false or an error. A payment batch has none.
func (d *DB) SourceRows(batch uint64, fn func(*funding.Row) (bool, error)) error {
	return scan(d, bucketSrcRows, u64(batch), func(_ kv.Tx, k, v []byte) (*funding.Row, error) {
		return decodeSource(keyFrom(k), v)
	}, fn)
}

// OpenSourceRows calls fn for each funding row without a result (pending,
// in flight, in doubt) of a Ready batch, in batch and line order: a batch
// still loading is not onboarding's yet.
func (d *DB) OpenSourceRows(fn func(*funding.Row) (bool, error)) error {
	return scanIndex(d, bucketSrcOpen, getSource, fn)
}

// TrackedSourceRows calls fn for each submitted funding row whose source's
// status is Tracked, in batch and line order: the rows onboarding's
// reconcile still follows.
func (d *DB) TrackedSourceRows(fn func(*funding.Row) (bool, error)) error {
	return scanIndex(d, bucketSrcTrack, getSource, fn)
}

// SourceOwners returns the rows that own the given source ids, in one
// read transaction, so that a lookup after a lost answer never takes a
// source another row made. Ids no row owns (and ids only Verify rows
// name) are absent from the map.
func (d *DB) SourceOwners(ids []string) (map[string]payment.RowKey, error) {
	out := make(map[string]payment.RowKey, len(ids))
	err := d.view(func(tx kv.Tx) error {
		b := tx.Bucket(bucketSrcIDs)
		for _, id := range ids {
			if raw := b.Get([]byte(id)); raw != nil {
				out[id] = keyFrom(raw)
			}
		}
		return nil
	})
	return out, err
}
