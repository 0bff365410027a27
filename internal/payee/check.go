package payee

import (
	"fmt"

	"github.com/batchd/batchd/internal/payment"
)

// The ingest.on_account_change modes.
const (
	Warn  = "warn"  // report and log the change; the row is paid
	Hold  = "hold"  // the row is held until released (batchd release)
	Allow = "allow" // say nothing; the account is still remembered
)

// Modes lists the valid ingest.on_account_change values.
var Modes = []string{Warn, Hold, Allow}

// Memory is what a Checker reads of the ledger: a payment.PayeeLedger has it.
type Memory interface {
	LastPaid(payee string) (payment.PayeeAccount, bool, error)
}

// Checker marks the rows of one file. A row is a change when its account
// differs from the one its payee was last paid to, or from the first
// account an earlier row of the same file gives that payee: two rows of
// one file paying one payee to two accounts are never both let through
// silently.
type Checker struct {
	key   *Key
	mem   Memory
	mode  string
	first map[string]payment.PayeeAccount // payee -> its first account in this file
}

// NewChecker checks one file's rows against mem in mode (Warn, Hold or
// Allow; "" is Warn).
func NewChecker(key *Key, mem Memory, mode string) *Checker {
	if mode == "" {
		mode = Warn
	}
	return &Checker{key: key, mem: mem, mode: mode, first: map[string]payment.PayeeAccount{}}
}

// Mark returns row p's payee mark; ok is false for a row without a bank
// account (a stored-account token), which gets none.
func (c *Checker) Mark(p *payment.Payment, payeeID string) (m payment.PayeeMark, ok bool, err error) {
	acct, ok := c.key.Account(p)
	if !ok {
		return payment.PayeeMark{}, false, nil
	}
	m = payment.PayeeMark{Payee: c.key.Payee(Name(p, payeeID)), Account: acct}
	last, known, err := c.mem.LastPaid(m.Payee)
	if err != nil {
		return m, false, fmt.Errorf("payee check: %w", err)
	}
	first, inFile := c.first[m.Payee]
	switch {
	case known && last.KeyID == acct.KeyID && last.Hash != acct.Hash:
		m.Change = &payment.AccountChange{From: last.Last4, To: acct.Last4, Action: c.mode}
	case inFile && first.Hash != acct.Hash:
		m.Change = &payment.AccountChange{From: first.Last4, To: acct.Last4, Action: c.mode}
	}
	if !inFile {
		c.first[m.Payee] = acct
	}
	return m, true, nil
}
