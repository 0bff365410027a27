package state

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
	"github.com/batchd/batchd/internal/state/kv"
)

// keyBytes is k as stored: big-endian batch then line, so that keys sort
// in the order submit works in.
func keyBytes(k payment.RowKey) []byte {
	var b [12]byte
	binary.BigEndian.PutUint64(b[:8], k.Batch)
	binary.BigEndian.PutUint32(b[8:], k.Line)
	return b[:]
}

func keyFrom(b []byte) payment.RowKey {
	return payment.RowKey{Batch: binary.BigEndian.Uint64(b[:8]), Line: binary.BigEndian.Uint32(b[8:12])}
}

// apply runs transition t on the row stored under k inside tx. mutate may
// adjust the row further; the state change, the history step and every
// index are maintained here, so no caller can forget one.
func (d *DB) apply(tx kv.Tx, k payment.RowKey, t payment.Transition, note string, mutate func(*payment.Row) error) (*payment.Row, error) {
	r, err := getRow(tx, k)
	if err != nil {
		return nil, err
	}
	next, err := t.Next(r.State)
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
	r.History = append(r.History, payment.Step{At: at, State: r.State, CheckStatus: r.CheckStatus, Note: note, Via: t})
	if before.Open() && !r.State.Open() {
		if err := settleMark(tx, k, t == payment.Create, at); err != nil {
			return nil, err
		}
	}
	if !r.State.Open() && r.Payment.BankAccount != "" {
		// Submitted or rejected rows are never sent again: keep only
		// the digits a report may show.
		r.Payment.AccountLast4 = redact.Last4(r.Payment.BankAccount)
		r.Payment.BankAccount = ""
	}
	if err := d.index(tx, r); err != nil {
		return nil, err
	}
	if err := putRow(tx, r); err != nil {
		return nil, err
	}
	if before != r.State {
		if err := bumpCounts(tx, k.Batch, before, r.State); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// index keeps the open, track and checks buckets in step with r.
func (d *DB) index(tx kv.Tx, r *payment.Row) error {
	key := keyBytes(r.Key)
	open, track := tx.Bucket(bucketOpen), tx.Bucket(bucketTrack)
	if r.State.Open() {
		if err := open.Put(key, []byte(r.State)); err != nil {
			return err
		}
	} else if err := open.Delete(key); err != nil {
		return err
	}
	if r.State == payment.Submitted && !r.CheckStatus.Final() {
		// Rows are submitted in about key order: pack the pages.
		track.FillPercent(1.0)
		if err := track.Put(key, nil); err != nil {
			return err
		}
	} else if err := track.Delete(key); err != nil {
		return err
	}
	if r.CheckID != "" {
		checks := tx.Bucket(bucketChecks)
		if prev := checks.Get([]byte(r.CheckID)); prev != nil && keyFrom(prev) != r.Key {
			return fmt.Errorf("%s: check %s: %w: %s", r.Key, r.CheckID, payment.ErrCheckOwned, keyFrom(prev))
		}
		return checks.Put([]byte(r.CheckID), key)
	}
	return nil
}

func getRow(tx kv.Tx, k payment.RowKey) (*payment.Row, error) {
	raw := tx.Bucket(bucketRows).Get(keyBytes(k))
	if raw == nil {
		return nil, fmt.Errorf("row %s: %w", k, payment.ErrNotFound)
	}
	return decodeRow(k, raw)
}

func decodeRow(k payment.RowKey, raw []byte) (*payment.Row, error) {
	r := &payment.Row{}
	if err := decodeRowValue(raw, r); err != nil {
		return nil, fmt.Errorf("decode row %s: %w", k, err)
	}
	r.Key = k
	return r, nil
}

func putRow(tx kv.Tx, r *payment.Row) error {
	b := tx.Bucket(bucketRows)
	b.FillPercent(rowFill)
	return b.Put(keyBytes(r.Key), encodeRow(nil, r))
}

// rowFill is how full bbolt fills a page of rows before splitting it.
// Rows are written in key order and then rewritten, growing, as they move
// through their states; splitting pages half-full (bbolt's default)
// leaves the ledger about twice the size of its data, and reconcile, which
// reads every row, keeps all of it in memory.
const rowFill = 0.9

// loadFill is how full the loader fills a page of new rows. A row grows
// by about 40% on its way to submitted (its check, two history steps) and
// a little more as reconcile records its statuses. Pages packed to
// rowFill at ingest split as their rows grow, one row at a time, and end
// about half full; filled to loadFill they end 83% full after submit and
// 89% once every check is deposited, without a split (docs/benchmarks.md,
// "Ledger size per row").
const loadFill = 0.65
