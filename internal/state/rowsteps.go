package state

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// The steps every type of row takes alike, over its rowType: the send
// intent, a lost answer, the rows an earlier process left in flight, the
// restore rules' doubt, and the statuses seen at the service, polled or
// pushed by a webhook.

// send marks a pending row in flight, counting the attempt and giving it
// its send-by deadline; also, when given, records more on the row. When
// it returns nil the intent is on disk, and only then may the request
// leave.
func (t *rowType[R]) send(d *DB, k payment.RowKey, also func(*R)) (*R, error) {
	return t.batchApply(d, k, payment.Send, "", func(r *R) error {
		// Read the clock inside the transaction, once the write lock is
		// had: a send that waited behind a long write (a file's load)
		// must not start its send-by window before it is recorded.
		at := d.now().UTC()
		h := t.head(r)
		*h.Attempts++
		*h.AttemptAt = at
		*h.SendBy = time.Time{}
		if d.sendWindow > 0 {
			*h.SendBy = at.Add(d.sendWindow)
		}
		if also != nil {
			also(r)
		}
		return nil
	})
}

// doubt records that a request's answer was lost, with reason: the row
// is looked up before it is ever sent again.
func (t *rowType[R]) doubt(d *DB, k payment.RowKey, reason string) (*R, error) {
	return t.batchApply(d, k, payment.Doubt, reason, func(r *R) error {
		*t.head(r).Error = reason
		return nil
	})
}

// recoverInFlight turns every row left in flight by an earlier process
// into a row in doubt, in one transaction: its request may have left
// before the process stopped. It returns how many it found.
func (t *rowType[R]) recoverInFlight(d *DB) (int, error) {
	n := 0
	err := d.update(func(tx kv.Tx) error {
		n = 0 // a retried transaction starts over
		var keys []payment.RowKey
		if err := tx.Bucket(t.open).ForEach(func(k, v []byte) error {
			if payment.RowState(v) == payment.InFlight {
				keys = append(keys, keyFrom(k))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range keys {
			if _, err := t.apply(d, tx, k, payment.Doubt, "found in flight at start: the process stopped mid-request", nil); err != nil {
				return err
			}
		}
		n = len(keys)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("recover %ss in flight: %w", t.noun, err)
	}
	return n, nil
}

// suspect puts the rows under keys in doubt (payment.Suspect) through
// write, in chunks, with note as their error: each row's attempt time
// becomes at, or stays earlier when it was, and its send-by deadline
// becomes sendBy unless later (see DB.suspectAll).
func (t *rowType[R]) suspect(d *DB, write func(func(kv.Tx) error) error, keys []payment.RowKey, at, sendBy time.Time, note string) error {
	for chunk := range slices.Chunk(keys, d.chunk) {
		err := write(func(tx kv.Tx) error {
			for _, k := range chunk {
				_, err := t.apply(d, tx, k, payment.Suspect, note, func(r *R) error {
					h := t.head(r)
					if h.AttemptAt.IsZero() || h.AttemptAt.After(at) {
						*h.AttemptAt = at.UTC()
					}
					if sendBy.After(*h.SendBy) {
						*h.SendBy = sendBy.UTC()
					}
					*h.Error = note
					return nil
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("put %ss in doubt: %w", t.noun, err)
		}
	}
	return nil
}

// observe records statuses seen at the service in one transaction (one
// fsync for a whole page of a listing, not one per row): each o in obs,
// for the row key(o), when moves says the row takes it, through see. It
// returns the rows it changed, as they now are.
//
// It goes through the store's group commit (d.batch), not d.update: on
// PostgreSQL a batch reads without the write lock and takes it only in
// the round trip that commits, so the walk's page processors no longer
// queue behind each other's reads. Batch's rules hold here: fn has no
// effect outside the transaction but changed, which every run starts
// afresh; a run that reads a present row as absent fails, and does not
// commit; only the run that commits fills changed.
func observe[R, O any](d *DB, t *rowType[R], obs []O, key func(O) payment.RowKey, moves func(*R, O) bool, see func(*R, O)) (map[payment.RowKey]*R, error) {
	changed := map[payment.RowKey]*R{}
	if len(obs) == 0 {
		return changed, nil
	}
	err := d.batch(func(tx kv.Tx) error {
		clear(changed) // a retried transaction starts over
		keys := make([]payment.RowKey, len(obs))
		for i, o := range obs {
			keys[i] = key(o)
		}
		// The rows are read together (one round trip on PostgreSQL, not
		// one a row); a row an earlier observation of this page changed
		// is read again, to see that change.
		rows, err := t.getMany(d)(tx, keys)
		if err != nil {
			return err
		}
		for i, o := range obs {
			k, r := keys[i], rows[i]
			if _, again := changed[k]; again {
				if r, err = t.get(d.ring(), tx, k); err != nil {
					return err
				}
			}
			if !moves(r, o) {
				continue
			}
			r, err = t.applyTo(d, tx, r, payment.Observe, "", func(r *R) error {
				see(r, o)
				return nil
			})
			if err != nil {
				return err
			}
			changed[k] = r
		}
		return nil
	})
	return changed, err
}

// hear applies a webhook event about id to the row that owns it, inside
// tx at now: through see, with the history note note, when moves says
// the row takes it; the row's HeardAt moves in any case.
func (t *rowType[R]) hear(d *DB, tx kv.Tx, id, note string, now time.Time, moves func(*R) bool, see func(*R)) (EventOutcome, error) {
	owner := tx.Bucket(t.owners).Get([]byte(id))
	if owner == nil {
		return EventUnknown, nil
	}
	k := keyFrom(owner)
	r, err := t.get(d.ring(), tx, k)
	if errors.Is(err, payment.ErrNotFound) {
		return "", fmt.Errorf("the %s index gives %s%s %s to %s, which does not exist: run `batchd check`", t.idsName, t.where, t.idNoun, id, k)
	}
	if err != nil {
		return "", err
	}
	if !moves(r) {
		*t.head(r).HeardAt = now
		return EventUnchanged, t.put(d.ring(), tx, r)
	}
	_, err = t.apply(d, tx, k, payment.Observe, note, func(r *R) error {
		see(r)
		*t.head(r).HeardAt = now
		return nil
	})
	return EventApplied, err
}
