package state

import (
	"bytes"
	"errors"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// The invariant walk of one type of row, the same for every type: each
// row decodes, has a legal state and belongs to a batch of its kind (whose
// tally it adds to); the open index holds exactly the rows without a
// result, with their state; the track index exactly the rows the type
// tracks; a row names an id exactly when it is submitted; and the owners
// index maps each id to the one row that owns it. Rows are read once, in
// key order, beside the two indexes (which are keyed alike), so that
// memory stays flat however many rows there are.

// rowChecks is the wording a type of row gives its faults, where the
// types differ.
type rowChecks[R any] struct {
	// wrongBatch says that the row's batch is of another kind.
	wrongBatch func(k payment.RowKey, b *payment.Batch) string
	// trackMissing is the fault of a tracked row missing from the track
	// index, with its status: "has a check not final (%s)".
	trackMissing string
	// foreign, when set, says that r names an id it never owns (a
	// verification names the source another row created); foreignNoun
	// says what such a row is ("a verification").
	foreign     func(r *R) bool
	foreignNoun string
	// counts are the Report's counters of this type's rows (nil: none
	// of its own) and of the ids they own; countFaulty counts an id a row
	// names even when the owners index disagrees.
	counts      func(r *Report) (rows, ids *int)
	countFaulty bool
}

// rowWalk is one walk of the rows of one type: the two index cursors
// beside the rows, and whether an id was found not owned as it should.
type rowWalk[R any] struct {
	t       *rowType[R]
	r       *Report
	ids     kv.Bucket
	oc, tc  kv.Cursor
	ok, ov  []byte
	tk      []byte
	idFault bool
}

// walk checks every row of type t in tx, adding each row to tally.
func (t *rowType[R]) walk(r *Report, tx kv.Tx, batches map[uint64]*payment.Batch, tally map[uint64]map[payment.RowState]int) {
	rows := tx.Bucket(t.rows)
	w := &rowWalk[R]{t: t, r: r, ids: tx.Bucket(t.owners), oc: tx.Bucket(t.open).Cursor(), tc: tx.Bucket(t.track).Cursor()}
	w.ok, w.ov = w.oc.First()
	w.tk, _ = w.tc.First()
	rc := rows.Cursor()
	for k, v := rc.First(); k != nil; k, v = rc.Next() {
		inOpen, openState, inTrack := w.indexed(k)
		row, key, ok := w.read(k, v)
		if !ok {
			continue
		}
		w.batch(key, row, batches, tally)
		w.row(k, row, inOpen, openState, inTrack)
	}
	for ; w.ok != nil; w.ok, _ = w.oc.Next() {
		w.orphan(t.openName, w.ok)
	}
	for ; w.tk != nil; w.tk, _ = w.tc.Next() {
		w.orphan(t.trackName, w.tk)
	}
	_, ids := t.checks.counts(r)
	if n := w.ids.KeyN(); n != *ids || w.idFault {
		t.sweepIDs(r, w.ids, rows)
	}
}

// indexed moves both index cursors up to k, naming the entries before it
// as orphans, and says whether k is in each (and its state in the open
// index).
func (w *rowWalk[R]) indexed(k []byte) (inOpen bool, openState payment.RowState, inTrack bool) {
	for w.ok != nil && bytes.Compare(w.ok, k) < 0 {
		w.orphan(w.t.openName, w.ok)
		w.ok, w.ov = w.oc.Next()
	}
	for w.tk != nil && bytes.Compare(w.tk, k) < 0 {
		w.orphan(w.t.trackName, w.tk)
		w.tk, _ = w.tc.Next()
	}
	inOpen, inTrack = w.ok != nil && bytes.Equal(w.ok, k), w.tk != nil && bytes.Equal(w.tk, k)
	openState = payment.RowState(w.ov)
	if inOpen {
		w.ok, w.ov = w.oc.Next()
	}
	if inTrack {
		w.tk, _ = w.tc.Next()
	}
	return inOpen, openState, inTrack
}

func (w *rowWalk[R]) orphan(index string, k []byte) {
	w.r.add(w.t.where+keyName(k), "the %s index names a %s that does not exist", index, w.t.noun)
}

// read decodes the row stored under k and counts it; ok is false when it
// is not a row with a legal state.
func (w *rowWalk[R]) read(k, v []byte) (row *R, key payment.RowKey, ok bool) {
	t, r := w.t, w.r
	if len(k) != 12 {
		r.add(t.rowsName, "a row key of %d bytes (want 12)", len(k))
		return nil, key, false
	}
	key = keyFrom(k)
	where := t.where + key.String()
	if v == nil {
		r.add(where, "is a bucket, not a row")
		return nil, key, false
	}
	row, err := t.decode(nil, key, v)
	if err != nil {
		r.add(where, "does not decode: %v", errors.Unwrap(err))
		return nil, key, false
	}
	r.Rows++
	if acct := *t.account(row); acct != "" && !acctseal.Sealed(acct) {
		r.clear(where)
	}
	if own, _ := t.checks.counts(r); own != nil {
		*own++
	}
	state := *t.head(row).State
	if !legal(state) {
		r.add(where, "has the unknown state %q", state)
		return nil, key, false
	}
	r.ByState[state]++
	return row, key, true
}

// batch checks that row belongs to a batch of its kind, and tallies it.
func (w *rowWalk[R]) batch(key payment.RowKey, row *R, batches map[uint64]*payment.Batch, tally map[uint64]map[payment.RowState]int) {
	where := w.t.where + key.String()
	b, ok := batches[key.Batch]
	if !ok {
		w.r.add(where, "belongs to batch %d, which the ledger does not have", key.Batch)
		return
	}
	if b.Kind.Payments() != w.t.payments {
		w.r.add(where, "%s", w.t.checks.wrongBatch(key, b))
	}
	if tally[key.Batch] == nil {
		tally[key.Batch] = map[payment.RowState]int{}
	}
	tally[key.Batch][*w.t.head(row).State]++
}

// row checks one row against the indexes and the id it names.
func (w *rowWalk[R]) row(k []byte, row *R, inOpen bool, openState payment.RowState, inTrack bool) {
	t, r := w.t, w.r
	where := t.where + keyFrom(k).String()
	state := *t.head(row).State
	switch {
	case state.Open() && !inOpen:
		r.add(where, "is %s but missing from the %s index", state, t.openName)
	case state.Open() && openState != state:
		r.add(where, "is %s but the %s index says %q", state, t.openName, openState)
	case !state.Open() && inOpen:
		r.add(where, "is %s but still in the %s index", state, t.openName)
	}
	switch want := t.tracked(row); {
	case want && !inTrack:
		r.add(where, t.checks.trackMissing+" but is missing from the %s index", orNone(t.status(row)), t.trackName)
	case !want && inTrack:
		r.add(where, "is in the %s index but is %s with %s status %s", t.trackName, state, t.idNoun, orNone(t.status(row)))
	}
	id, _ := t.owned(row)
	switch {
	case state == payment.Submitted && id == "":
		r.add(where, "is submitted without a %s id", t.idNoun)
	case state != payment.Submitted && id != "":
		r.add(where, "is %s but has %s %s", state, t.idNoun, id)
	}
	w.owner(k, row)
}

// owner checks that the owners index gives the id row owns to row, and
// never gives it a foreign id.
func (w *rowWalk[R]) owner(k []byte, row *R) {
	t, r := w.t, w.r
	id, owns := t.owned(row)
	if id == "" {
		return
	}
	where := t.where + keyFrom(k).String()
	owner := w.ids.Get([]byte(id))
	mine := bytes.Equal(owner, k)
	switch {
	case !owns:
		if mine {
			w.idFault = true
			r.add(where, "is %s of %s %s, but the %s index gives the %s to it", t.checks.foreignNoun, t.idNoun, id, t.idsName, t.idNoun)
		}
	case owner == nil:
		w.idFault = true
		r.add(where, "owns %s %s, which is missing from the %s index", t.idNoun, id, t.idsName)
	case !mine:
		w.idFault = true
		r.add(where, "owns %s %s, which the %s index gives to %s: a %s id owned by two rows", t.idNoun, id, t.idsName, keyName(owner), t.idNoun)
	}
	if _, n := t.checks.counts(r); owns && (mine || t.checks.countFaulty) {
		*n++
	}
}

// sweepIDs names the owners entries that no row owns: an entry naming a
// row that does not exist, whose id is another, or that never owns one.
func (t *rowType[R]) sweepIDs(r *Report, ids, rows kv.Bucket) {
	_ = ids.ForEach(func(id, k []byte) error {
		where := t.where + t.idNoun + " " + string(id)
		raw := rows.Get(k)
		if len(k) != 12 || raw == nil {
			r.add(where, "the %s index names %s, which does not exist", t.idsName, keyName(k))
			return nil
		}
		row, err := t.decode(nil, keyFrom(k), raw)
		if err != nil {
			return nil
		}
		switch named, _ := t.owned(row); {
		case t.checks.foreign != nil && t.checks.foreign(row):
			r.add(where, "the %s index names %s, %s, which never owns its %s", t.idsName, keyFrom(k), t.checks.foreignNoun, t.idNoun)
		case named != string(id):
			if named == "" {
				named = "none"
			}
			r.add(where, "the %s index names %s, whose %s is %s", t.idsName, keyFrom(k), t.idNoun, named)
		}
		return nil
	})
}
