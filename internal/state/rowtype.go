package state

import (
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// One row store for every type of row. Payment rows and funding-source
// rows (and the payment links, cancels and edits to come) move through
// the same payment.Transition table, are indexed alike (the rows without
// a result, the rows still followed, the one row that owns each id the
// service gave), are counted in their batch and checked by the same
// invariants. Each rule is written once, over a rowType; a type of row is
// a rowType value (paymentRows in rows.go, sourceRows in funding.go), so
// a new one is a new value and not a copy of the rules.

// rowType is what the ledger's rules need to know of one type of row R.
type rowType[R any] struct {
	// rowKind names the buckets, and the batches that hold the rows.
	rowKind
	// noun names a row in errors: "row", "funding row".
	noun string
	// where prefixes a row's (or an id's) place in a Report: "" or
	// "funding ".
	where string
	// idNoun names the id a row owns, in messages: "check", "source".
	idNoun string
	// rowsName, openName, trackName and idsName are the buckets'
	// names in a Report.
	rowsName, openName, trackName, idsName string

	// head points at the fields every row type has.
	head func(*R) rowHead
	// unmarshal and marshal are the stored form.
	unmarshal func([]byte, *R) error
	marshal   func(*R) ([]byte, error)
	// account points at the row's full account number, which is sealed
	// (acctseal) in the stored form and in the clear in memory.
	account func(*R) *string
	// next is the state t leads to from from (t.Next, or steps of the
	// type's own that keep the state).
	next func(t payment.Transition, from payment.RowState) (payment.RowState, error)
	// status is the status at the service a history step records.
	status func(*R) payment.Status
	// tracked is the track index's rule: a submitted row whose status
	// still moves on by itself.
	tracked func(*R) bool
	// owned is the id the row names and whether it owns it (is indexed
	// as its owner).
	owned func(*R) (id string, owns bool)
	// final says that nothing more will happen to the row; lastChange is
	// when it last changed (retention).
	final      func(*R) bool
	lastChange func(*R) time.Time
	// settle runs after a transition's history step, before the row is
	// indexed and stored: what a row leaving the open states takes along
	// or drops (the payee's mark, full account numbers, tokens).
	settle func(tx kv.Tx, r *R, before payment.RowState, t payment.Transition, at time.Time) error
	// checks is the wording the invariant walk needs (rowcheck.go).
	checks rowChecks[R]
}

// rowHead points at the fields every type of row has.
type rowHead struct {
	Key       *payment.RowKey
	State     *payment.RowState
	History   *[]payment.Step
	Attempts  *int
	AttemptAt *time.Time
	SendBy    *time.Time
	Error     *string
	HeardAt   *time.Time
}

// withFacts returns t with prune's facts (rowKind.facts) read through t.
func withFacts[R any](t *rowType[R]) *rowType[R] {
	t.facts = func(k, v []byte) (bool, time.Time, string, error) {
		r, err := t.decode(nil, keyFrom(k), v)
		if err != nil {
			return false, time.Time{}, "", err
		}
		id, owns := t.owned(r)
		if !owns {
			id = ""
		}
		return t.final(r), t.lastChange(r), id, nil
	}
	return t
}

// get reads the row under k, its account number opened with keys.
func (t *rowType[R]) get(keys *acctseal.Ring, tx kv.Tx, k payment.RowKey) (*R, error) {
	return t.stored(keys, k, tx.Bucket(t.rows).Get(keyBytes(k)))
}

// stored is the row under k whose stored form is raw (nil: none).
func (t *rowType[R]) stored(keys *acctseal.Ring, k payment.RowKey, raw []byte) (*R, error) {
	if raw == nil {
		return nil, fmt.Errorf("%s %s: %w", t.noun, k, payment.ErrNotFound)
	}
	return t.decode(keys, k, raw)
}

// getMany is get of many rows with d's keys, read together
// (kv.Bucket.GetMany: one round trip on PostgreSQL), as scanIndex takes
// it.
func (t *rowType[R]) getMany(d *DB) func(kv.Tx, []payment.RowKey) ([]*R, error) {
	return func(tx kv.Tx, keys []payment.RowKey) ([]*R, error) {
		raw := make([][]byte, len(keys))
		for i, k := range keys {
			raw[i] = keyBytes(k)
		}
		out := make([]*R, len(keys))
		for i, v := range tx.Bucket(t.rows).GetMany(raw) {
			r, err := t.stored(d.ring(), keys[i], v)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
}

// decode reads a stored row and opens its account number with keys; nil
// keys leave the number as stored (sealed or not), for the readers that
// never look at it (prune's facts, the invariant walk).
func (t *rowType[R]) decode(keys *acctseal.Ring, k payment.RowKey, raw []byte) (*R, error) {
	r := new(R)
	if err := t.unmarshal(raw, r); err != nil {
		return nil, fmt.Errorf("decode %s %s: %w", t.noun, k, err)
	}
	*t.head(r).Key = k
	if keys != nil {
		acct := t.account(r)
		plain, err := keys.Open(*acct, t.aad(k))
		if err != nil {
			return nil, fmt.Errorf("decode %s %s: account number: %w", t.noun, k, err)
		}
		*acct = plain
	}
	return r, nil
}

// aad binds a sealed account number to its row: a value copied to
// another row, or from a payment row to a funding row, does not open.
func (t *rowType[R]) aad(k payment.RowKey) []byte {
	return append(append([]byte(nil), t.rows...), keyBytes(k)...)
}

// encode is r's stored form, its account number sealed under keys'
// newest key; r itself keeps the number in the clear.
func (t *rowType[R]) encode(keys *acctseal.Ring, r *R) ([]byte, error) {
	acct := t.account(r)
	plain := *acct
	sealed, err := keys.Seal(plain, t.aad(*t.head(r).Key))
	if err != nil {
		return nil, fmt.Errorf("store %s %s: %w", t.noun, *t.head(r).Key, err)
	}
	*acct = sealed
	defer func() { *acct = plain }()
	return t.marshal(r)
}

// put stores r as encode makes it.
func (t *rowType[R]) put(keys *acctseal.Ring, tx kv.Tx, r *R) error {
	raw, err := t.encode(keys, r)
	if err != nil {
		return err
	}
	b := tx.Bucket(t.rows)
	b.FillPercent(rowFill)
	return b.Put(keyBytes(*t.head(r).Key), raw)
}

// apply runs transition tr on the row stored under k inside tx. mutate
// may adjust the row further; the state change, the history step, the
// settling and every index are maintained here, so no caller can forget
// one.
func (t *rowType[R]) apply(d *DB, tx kv.Tx, k payment.RowKey, tr payment.Transition, note string, mutate func(*R) error) (*R, error) {
	r, err := t.get(d.ring(), tx, k)
	if err != nil {
		return nil, err
	}
	return t.applyTo(d, tx, r, tr, note, mutate)
}

// applyTo is apply on r, already read from tx (with or without its
// account number opened).
func (t *rowType[R]) applyTo(d *DB, tx kv.Tx, r *R, tr payment.Transition, note string, mutate func(*R) error) (*R, error) {
	h := t.head(r)
	k := *h.Key
	next, err := t.next(tr, *h.State)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k, err)
	}
	before := *h.State
	was := t.indexed(r)
	*h.State = next
	if mutate != nil {
		if err := mutate(r); err != nil {
			return nil, err
		}
	}
	at := d.now().UTC().Truncate(time.Millisecond)
	*h.History = append(*h.History, payment.Step{At: at, State: *h.State, CheckStatus: t.status(r), Note: note, Via: tr})
	if err := t.settle(tx, r, before, tr, at); err != nil {
		return nil, err
	}
	if err := t.index(tx, r, was); err != nil {
		return nil, err
	}
	if err := t.put(d.ring(), tx, r); err != nil {
		return nil, err
	}
	if before != *h.State {
		if err := bumpCounts(tx, k.Batch, before, *h.State); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// entries is what a row's index entries are: its open state (when
// open), whether it is tracked, and the id it owns.
type entries struct {
	state         payment.RowState
	open, tracked bool
	id            string
	owns          bool
}

// indexed is the index entries r has as it stands.
func (t *rowType[R]) indexed(r *R) entries {
	h := t.head(r)
	id, owns := t.owned(r)
	return entries{state: *h.State, open: h.State.Open(), tracked: t.tracked(r), id: id, owns: owns}
}

// index keeps the open, track and owners buckets in step with r, given
// the entries the row had before this transition (was): the row and its
// entries are only ever written together, in one transaction, so only an
// entry the transition changes is written. (A status seen again leaves
// all three as they were; on PostgreSQL each entry left alone is a key
// the commit does not write, nor its table row.) It refuses
// (payment.ErrCheckOwned) an id another row owns.
func (t *rowType[R]) index(tx kv.Tx, r *R, was entries) error {
	now := t.indexed(r)
	key := keyBytes(*t.head(r).Key)
	open, track := tx.Bucket(t.open), tx.Bucket(t.track)
	switch {
	case now.open && (!was.open || was.state != now.state):
		if err := open.Put(key, []byte(now.state)); err != nil {
			return err
		}
	case !now.open && was.open:
		if err := open.Delete(key); err != nil {
			return err
		}
	}
	switch {
	case now.tracked && !was.tracked:
		// Rows are submitted in about key order: pack the pages.
		track.FillPercent(1.0)
		if err := track.Put(key, nil); err != nil {
			return err
		}
	case !now.tracked && was.tracked:
		if err := track.Delete(key); err != nil {
			return err
		}
	}
	if !now.owns || (was.owns && was.id == now.id) {
		return nil
	}
	ids := tx.Bucket(t.owners)
	if prev := ids.Get([]byte(now.id)); prev != nil && keyFrom(prev) != *t.head(r).Key {
		return fmt.Errorf("%s: %s%s %s: %w: %s", *t.head(r).Key, t.where, t.idNoun, now.id, payment.ErrCheckOwned, keyFrom(prev))
	}
	return ids.Put([]byte(now.id), key)
}

// batchApply runs one transition through the store's group commit.
func (t *rowType[R]) batchApply(d *DB, k payment.RowKey, tr payment.Transition, note string, mutate func(*R) error) (*R, error) {
	var out *R
	err := d.batch(func(tx kv.Tx) error {
		r, err := t.apply(d, tx, k, tr, note, mutate)
		out = r
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s %s %s: %w", tr, t.noun, k, err)
	}
	return out, nil
}

// openKeys are the keys of every row in tx's open index.
func (t *rowType[R]) openKeys(tx kv.Tx) ([]payment.RowKey, error) {
	var keys []payment.RowKey
	err := tx.Bucket(t.open).ForEach(func(k, _ []byte) error {
		keys = append(keys, keyFrom(k))
		return nil
	})
	return keys, err
}

// archiver is archive, an archiver of decoded rows of type R, as prune's
// rawArchiver of stored rows.
func (t *rowType[R]) archiver(archive func(b *payment.Batch, rows func(fn func(*R) error) error) error) rawArchiver {
	return func(b *payment.Batch, raw func(func(k, v []byte) error) error) error {
		return archive(b, func(fn func(*R) error) error {
			return raw(func(k, v []byte) error {
				r, err := t.decode(nil, keyFrom(k), v)
				if err != nil {
					return err
				}
				return fn(r)
			})
		})
	}
}

// batchRows calls fn for each row of a batch in line order, until fn
// returns false or an error.
func (t *rowType[R]) batchRows(d *DB, batch uint64, fn func(*R) (bool, error)) error {
	return scan(d, t.rows, u64(batch), func(_ kv.Tx, ks, vs [][]byte) ([]*R, error) {
		out := make([]*R, len(ks))
		for i, k := range ks {
			r, err := t.decode(d.ring(), keyFrom(k), vs[i])
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}, fn)
}

// openRows calls fn for each row without a result of a Ready batch, in
// batch and line order.
func (t *rowType[R]) openRows(d *DB, fn func(*R) (bool, error)) error {
	return scanIndex(d, t.open, t.getMany(d), fn)
}

// trackedRows calls fn for each row the track index holds, in batch and
// line order.
func (t *rowType[R]) trackedRows(d *DB, fn func(*R) (bool, error)) error {
	return scanIndex(d, t.track, t.getMany(d), fn)
}

// ownersOf returns the rows that own the given ids, in one read
// transaction. Ids no row owns are absent from the map.
func (t *rowType[R]) ownersOf(d *DB, ids []string) (map[string]payment.RowKey, error) {
	out := make(map[string]payment.RowKey, len(ids))
	err := d.readRows(len(ids), func(tx kv.Tx) error {
		b := tx.Bucket(t.owners)
		for _, id := range ids {
			if raw := b.Get([]byte(id)); raw != nil {
				out[id] = keyFrom(raw)
			}
		}
		return nil
	})
	return out, err
}
