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
			if err := sourceRows.put(l.d.ring(), tx, r); err != nil {
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

// sourceRows is the funding rows' rowType: the src_* buckets, JSON (these
// files are small, and a funding row has fields a payment row's codec
// does not), the payment.Transition table with keepRules. A row is
// tracked while its source's status is Tracked, and owns the source it
// names unless it is a verification.
var sourceRows = withFacts(&rowType[funding.Row]{
	rowKind: rowKind{payments: false, rows: bucketSrcRows, open: bucketSrcOpen, track: bucketSrcTrack, owners: bucketSrcIDs},
	noun:    "funding row", where: "funding ", idNoun: "source",
	rowsName: "src_rows", openName: "src_open", trackName: "src_track", idsName: "src_ids",
	head: func(r *funding.Row) rowHead {
		return rowHead{Key: &r.Key, State: &r.State, History: &r.History, Attempts: &r.Attempts, AttemptAt: &r.AttemptAt, SendBy: &r.SendBy, Error: &r.Error,
			HeardAt: &r.HeardAt}
	},
	unmarshal:  func(raw []byte, r *funding.Row) error { return json.Unmarshal(raw, r) },
	marshal:    func(r *funding.Row) ([]byte, error) { return json.Marshal(r) },
	account:    func(r *funding.Row) *string { return &r.Request.Account },
	next:       nextSource,
	status:     func(r *funding.Row) payment.Status { return payment.Status(r.Status) },
	tracked:    sourceTracked,
	owned:      func(r *funding.Row) (string, bool) { return r.SourceID, ownsSource(r) },
	final:      sourceFinal,
	lastChange: sourceLastChange,
	settle:     settleSource,
	checks: rowChecks[funding.Row]{
		wrongBatch: func(k payment.RowKey, _ *payment.Batch) string {
			return fmt.Sprintf("is a funding row of batch %d, a payment batch", k.Batch)
		},
		trackMissing: "has a source still %s",
		foreign:      func(r *funding.Row) bool { return r.Request.Method == funding.Verify },
		foreignNoun:  "a verification",
		counts:       func(r *Report) (rows, ids *int) { return &r.SourceRows, &r.Sources },
	},
})

// settleSource drops what a funding row with a result no longer needs: a
// token is exchanged once, and a credential is not kept longer than
// needed; of the account number, as of a payment row's, only the digits
// a report may show remain.
func settleSource(_ kv.Tx, r *funding.Row, _ payment.RowState, _ payment.Transition, _ time.Time) error {
	if r.State.Open() {
		return nil
	}
	r.Request.ProcessorToken = ""
	if r.Request.Account != "" {
		r.Request.AccountLast4 = redact.Last4(r.Request.Account)
		r.Request.Account = ""
	}
	return nil
}

// sourceTracked is the track index's rule: a submitted row whose source's
// status still moves on by itself.
func sourceTracked(r *funding.Row) bool { return r.State == payment.Submitted && r.Status.Tracked() }

// ownsSource reports whether r owns the source it names: a Verify row
// names a source another row created, and never owns it.
func ownsSource(r *funding.Row) bool { return r.SourceID != "" && r.Request.Method != funding.Verify }

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

// SourceRow returns one funding row.
func (d *DB) SourceRow(k payment.RowKey) (*funding.Row, error) {
	var r *funding.Row
	err := d.view(func(tx kv.Tx) (err error) {
		r, err = sourceRows.get(d.ring(), tx, k)
		return err
	})
	return r, err
}

// SourceRows calls fn for each funding row of a batch in line order, until
// fn returns false or an error. A payment batch has none.
func (d *DB) SourceRows(batch uint64, fn func(*funding.Row) (bool, error)) error {
	return sourceRows.batchRows(d, batch, fn)
}

// OpenSourceRows calls fn for each funding row without a result (pending,
// in flight, in doubt) of a Ready batch, in batch and line order: a batch
// still loading is not onboarding's yet.
func (d *DB) OpenSourceRows(fn func(*funding.Row) (bool, error)) error {
	return sourceRows.openRows(d, fn)
}

// TrackedSourceRows calls fn for each submitted funding row whose source's
// status is Tracked, in batch and line order: the rows onboarding's
// reconcile still follows.
func (d *DB) TrackedSourceRows(fn func(*funding.Row) (bool, error)) error {
	return sourceRows.trackedRows(d, fn)
}

// SourceOwners returns the rows that own the given source ids, in one
// read transaction, so that a lookup after a lost answer never takes a
// source another row made. Ids no row owns (and ids only Verify rows
// name) are absent from the map.
func (d *DB) SourceOwners(ids []string) (map[string]payment.RowKey, error) {
	return sourceRows.ownersOf(d, ids)
}
