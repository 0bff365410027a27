package state

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// The tokens of payees' accounts (payment.TokenLedger), one record per
// payee and account (records.go). A token is a credential for the
// account, so it is sealed (acctseal) with the account numbers' key ring,
// bound to its key, and moved to a new key by SealAccounts like them.
//
//	tokens  <AccountToken.Key> -> payment.AccountToken (JSON), Token sealed
var bucketTokens = []byte("tokens")

// tokenAAD binds a sealed token to its record: copied under another
// payee's key, it does not open.
func tokenAAD(key string) []byte { return append(append([]byte(nil), bucketTokens...), key...) }

// AccountToken returns the token recorded under key, or nil when none
// was or no key of the ring opens it (the account is tokenized again).
func (d *DB) AccountToken(key string) (*payment.AccountToken, error) {
	var t payment.AccountToken
	found, err := d.readRecord(bucketTokens, []byte(key), &t)
	if err != nil {
		return nil, fmt.Errorf("read an account token: %w", err)
	}
	if !found {
		return nil, nil
	}
	plain, err := d.ring().Open(t.Token, tokenAAD(key))
	if errors.Is(err, acctseal.ErrKeyMissing) || errors.Is(err, acctseal.ErrDamaged) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read an account token: %w", err)
	}
	t.Token = plain
	return &t, nil
}

// PutAccountToken records t, its token sealed under the ring's newest key.
func (d *DB) PutAccountToken(t payment.AccountToken) error {
	if t.Key == "" || t.Token == "" {
		return fmt.Errorf("record an account token: no key or no token")
	}
	sealed, err := d.ring().Seal(t.Token, tokenAAD(t.Key))
	if err != nil {
		return fmt.Errorf("record an account token: %w", err)
	}
	t.Token = sealed
	if err := d.writeRecord(bucketTokens, []byte(t.Key), t); err != nil {
		return fmt.Errorf("record an account token: %w", err)
	}
	return nil
}

// resealTokens is SealAccounts for the tokens: each one in the clear or
// under an older key is sealed under the newest (a token per payee and
// account, not per row: one transaction); one that no key opens is
// dropped, and its account tokenized again when next paid. A ledger with
// nothing to move is only read (a standby opens it too).
func resealTokens(d *DB, rep *SealReport) error {
	var stale map[string][]byte
	err := d.view(func(tx kv.Tx) (err error) {
		stale, err = d.staleTokens(tx)
		return err
	})
	if err == nil && len(stale) > 0 {
		err = d.update(func(tx kv.Tx) error {
			rep.Tokens, rep.TokensDropped = 0, 0 // a retried transaction counts again
			if stale, err = d.staleTokens(tx); err != nil {
				return err
			}
			b := tx.Bucket(bucketTokens)
			for k, raw := range stale {
				if raw == nil {
					rep.TokensDropped++
					err = b.Delete([]byte(k))
				} else {
					rep.Tokens++
					err = b.Put([]byte(k), raw)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("seal account tokens: %w", err)
	}
	return nil
}

// staleTokens are the token records not sealed under the newest key, by
// key, each sealed anew, or nil when no key opens it.
func (d *DB) staleTokens(tx kv.Tx) (map[string][]byte, error) {
	stale := map[string][]byte{}
	b := tx.Bucket(bucketTokens)
	if b == nil {
		return stale, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		raw, fresh, err := d.resealToken(string(k), v)
		if fresh {
			stale[string(k)] = raw
		}
		return err
	})
	return stale, err
}

// resealToken is the stored token record v of key sealed under the
// newest key; fresh is false when it already was, and raw nil when no
// key opens it.
func (d *DB) resealToken(key string, v []byte) (raw []byte, fresh bool, err error) {
	var t payment.AccountToken
	if err := json.Unmarshal(v, &t); err != nil {
		return nil, false, fmt.Errorf("token record: %w", err)
	}
	if sealedUnder(t.Token, d.ring().Newest()) {
		return nil, false, nil
	}
	plain, err := d.ring().Open(t.Token, tokenAAD(key))
	if errors.Is(err, acctseal.ErrKeyMissing) || errors.Is(err, acctseal.ErrDamaged) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	if t.Token, err = d.ring().Seal(plain, tokenAAD(key)); err != nil {
		return nil, false, err
	}
	raw, err = json.Marshal(t)
	return raw, err == nil, err
}
