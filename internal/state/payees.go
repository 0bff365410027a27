package state

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// The payee buckets (README "Payee bank-detail changes"). Like the webhook
// events' buckets they need no schema version: the first write makes
// them, a ledger without them reads as one that never paid a payee, and a
// build that does not know them never looks at them. Neither holds an
// account number: only last four digits, length and keyed hashes.
var (
	bucketPayees     = []byte("payees")      // payee (keyed hash) -> payment.PayeeAccount, the account last paid
	bucketPayeeMarks = []byte("payee_marks") // payment.RowKey -> payment.PayeeMark (markCodecV1): until the row's check is made, then only a change's
)

// putMark records the payee mark of a row being loaded.
func putMark(tx kv.Tx, k payment.RowKey, m *payment.PayeeMark) error {
	b, err := tx.CreateBucketIfNotExists(bucketPayeeMarks)
	if err != nil {
		return err
	}
	b.FillPercent(1.0) // marks are written in key order, and never grow
	return b.Put(keyBytes(k), encodeMark(m))
}

// getMark reads a row's payee mark; nil when it has none.
func getMark(tx kv.Tx, k payment.RowKey) (*payment.PayeeMark, error) {
	b := tx.Bucket(bucketPayeeMarks)
	if b == nil {
		return nil, nil
	}
	raw := b.Get(keyBytes(k))
	if raw == nil {
		return nil, nil
	}
	m, err := decodeMark(raw)
	if err != nil {
		return nil, fmt.Errorf("payee mark of %s: %w", k, err)
	}
	return &m, nil
}

// settleMark is called by apply, in the transaction that ends row k's
// open life. When its check was created (paid), the row's account becomes
// its payee's last account paid: the memory moves exactly when money went
// to that account, and never twice. A mark that records no change is then
// removed (nothing reports it), so that only changes stay in the ledger.
func settleMark(tx kv.Tx, k payment.RowKey, paid bool, at time.Time) error {
	m, err := getMark(tx, k)
	if err != nil || m == nil {
		return err
	}
	if paid && m.Payee != "" {
		b, err := tx.CreateBucketIfNotExists(bucketPayees)
		if err != nil {
			return err
		}
		acct := m.Account
		acct.Row, acct.At = k, at
		raw, err := json.Marshal(acct)
		if err != nil {
			return err
		}
		if err := b.Put([]byte(m.Payee), raw); err != nil {
			return err
		}
	}
	if m.Change == nil {
		return deleteMarks(tx, [][]byte{keyBytes(k)})
	}
	return nil
}

// deleteMarks removes the payee marks of the given rows (pruned or
// discarded with their batch).
func deleteMarks(tx kv.Tx, keys [][]byte) error {
	b := tx.Bucket(bucketPayeeMarks)
	if b == nil {
		return nil
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// LastPaid is the account payee was last paid to, if batchd ever paid it.
func (d *DB) LastPaid(payee string) (payment.PayeeAccount, bool, error) {
	var (
		acct  payment.PayeeAccount
		found bool
	)
	err := d.view(func(tx kv.Tx) error {
		b := tx.Bucket(bucketPayees)
		if b == nil {
			return nil
		}
		raw := b.Get([]byte(payee))
		if raw == nil {
			return nil
		}
		found = true
		return json.Unmarshal(raw, &acct)
	})
	if err != nil {
		return payment.PayeeAccount{}, false, fmt.Errorf("read payee's last account: %w", err)
	}
	return acct, found, nil
}

// PayeeMarks returns the payee marks of a batch's rows, by line.
func (d *DB) PayeeMarks(batch uint64) (map[uint32]payment.PayeeMark, error) {
	marks := map[uint32]payment.PayeeMark{}
	err := d.view(func(tx kv.Tx) error {
		b := tx.Bucket(bucketPayeeMarks)
		if b == nil {
			return nil
		}
		prefix := u64(batch)
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, v = c.Next() {
			m, err := decodeMark(v)
			if err != nil {
				return fmt.Errorf("payee mark of %s: %w", keyFrom(k), err)
			}
			marks[keyFrom(k).Line] = m
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read payee marks of batch %d: %w", batch, err)
	}
	return marks, nil
}

// heldReason is the error of held row k: its change, from its payee mark,
// and the release command, with the file's name from its batch.
func heldReason(tx kv.Tx, k payment.RowKey) (string, error) {
	m, err := getMark(tx, k)
	if err != nil {
		return "", err
	}
	b, err := getBatch(tx, k.Batch)
	if err != nil {
		return "", err
	}
	if m == nil || m.Change == nil {
		return "held: bank details changed; release with batchd release --file " + b.File + " --line " + fmt.Sprint(k.Line), nil
	}
	return payment.HeldReason(m.Change, b.File, int(k.Line)), nil
}

// ApproveHeld makes a held row pending (payment.Approve), with who
// approved it in the row's history, and clears the batch's results-report
// stamp in the same transaction: the report delivered while the row was
// held is written again, with the row's check, once the batch is done.
func (d *DB) ApproveHeld(k payment.RowKey, who string) (*payment.Row, error) {
	var out *payment.Row
	err := d.update(func(tx kv.Tx) error {
		r, err := paymentRows.apply(d, tx, k, payment.Approve, "released by "+who, func(r *payment.Row) error {
			r.Error = ""
			return nil
		})
		if err != nil {
			return err
		}
		b, err := getBatch(tx, k.Batch)
		if err != nil {
			return err
		}
		b.ResultsReported = time.Time{}
		out = r
		return putBatch(tx, b)
	})
	if err != nil {
		return nil, fmt.Errorf("release held row %s: %w", k, err)
	}
	return out, nil
}
