package state

import (
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// Only rows without a result hold a full account number: a row leaving
// the open states keeps the last four digits alone (settlePayment,
// settleSource). So sealing a ledger's numbers, or moving them to a new
// key, walks the open indexes, not every row.

// SealReport says what SealAccounts did.
type SealReport struct {
	// Clear counts the rows whose number was stored in the clear (a
	// ledger written before numbers were sealed), now sealed.
	Clear int `json:"clear"`
	// Resealed counts the rows moved from an older key to the newest.
	Resealed int `json:"resealed"`
	// Unreadable names the rows whose number does not open: its key is
	// missing from the ring, or the value is damaged. Never a number.
	Unreadable []string `json:"unreadable,omitempty"`
	// Tokens counts the account tokens sealed anew (in the clear or
	// under an older key), TokensDropped those no key opens, dropped:
	// their accounts are tokenized again (a token is not money).
	Tokens        int `json:"tokens,omitempty"`
	TokensDropped int `json:"tokens_dropped,omitempty"`
}

// SealAccounts seals under the ring's newest key every full account
// number stored in the clear or under an older key, in transactions of
// the loader's chunk size. Rows whose number cannot be opened are named
// in the report and left as they are: MarkKeyLost settles them.
func (d *DB) SealAccounts() (SealReport, error) {
	var rep SealReport
	if d.ring().Clear() {
		return rep, nil
	}
	if err := reseal(d, paymentRows, &rep); err != nil {
		return rep, err
	}
	if err := reseal(d, sourceRows, &rep); err != nil {
		return rep, err
	}
	if err := resealTokens(d, &rep); err != nil {
		return rep, err
	}
	// Every number that opens is under the newest key now. One that does
	// not is named in the report, its key lost to this ring, and batchd
	// keylost settles it: the record moves on all the same, or no host
	// could lead again once a key is lost everywhere.
	if err := d.recordSealingKey(true); err != nil {
		return rep, fmt.Errorf("seal account numbers: %w", err)
	}
	return rep, nil
}

// reseal is SealAccounts over one type of row.
func reseal[R any](d *DB, t *rowType[R], rep *SealReport) error {
	var stale []payment.RowKey
	err := d.view(func(tx kv.Tx) error {
		stale = stale[:0]
		rows := tx.Bucket(t.rows)
		return tx.Bucket(t.open).ForEach(func(k, _ []byte) error {
			raw := rows.Get(k)
			if raw == nil {
				return nil // the check names it
			}
			r, err := t.decode(nil, keyFrom(k), raw)
			if err != nil {
				return err
			}
			if acct := *t.account(r); acct != "" && !sealedUnder(acct, d.ring().Newest()) {
				stale = append(stale, keyFrom(k))
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("seal account numbers of %s: %w", t.rowsName, err)
	}
	for len(stale) > 0 {
		n := min(len(stale), d.chunk)
		var part SealReport
		err := d.update(func(tx kv.Tx) error {
			part = SealReport{} // a retried transaction counts again
			return resealChunk(d, t, tx, stale[:n], &part)
		})
		if err != nil {
			return fmt.Errorf("seal account numbers of %s: %w", t.rowsName, err)
		}
		rep.Clear += part.Clear
		rep.Resealed += part.Resealed
		rep.Unreadable = append(rep.Unreadable, part.Unreadable...)
		stale = stale[n:]
	}
	return nil
}

// resealChunk rewrites keys' rows, their numbers sealed under the newest
// key, and counts them in rep.
func resealChunk[R any](d *DB, t *rowType[R], tx kv.Tx, keys []payment.RowKey, rep *SealReport) error {
	for _, k := range keys {
		r, err := t.get(nil, tx, k)
		if err != nil {
			return err
		}
		wasClear := !acctseal.Sealed(*t.account(r))
		if r, err = t.get(d.ring(), tx, k); errors.Is(err, acctseal.ErrKeyMissing) || errors.Is(err, acctseal.ErrDamaged) {
			rep.Unreadable = append(rep.Unreadable, t.where+k.String())
			continue
		} else if err != nil {
			return err
		}
		if err := t.put(d.ring(), tx, r); err != nil {
			return err
		}
		if wasClear {
			rep.Clear++
		} else {
			rep.Resealed++
		}
	}
	return nil
}

// sealedUnder reports whether acct is sealed under key id.
func sealedUnder(acct string, id uint32) bool {
	if !acctseal.Sealed(acct) {
		return false
	}
	got, err := acctseal.KeyID(acct)
	return err == nil && got == id
}
