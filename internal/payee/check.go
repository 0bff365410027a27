package payee

import (
	"fmt"
	"strconv"

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
	first map[uint64]seen // payee (short) -> its first account in this file
}

// seen is what a Checker keeps of a payee's first account in a file: 64
// bits of each hash are plenty to tell a file's payees and accounts apart,
// and keep a file of a million payees to some 40 MB.
type seen struct {
	account uint64
	last4   string
}

// short is the first 64 bits of a hex hash.
func short(hexHash string) uint64 {
	v, _ := strconv.ParseUint(hexHash[:16], 16, 64) // a Key's hashes are 64 hex digits
	return v
}

// NewChecker checks one file's rows against mem in mode (Warn, Hold or
// Allow; "" is Warn).
func NewChecker(key *Key, mem Memory, mode string) *Checker {
	if mode == "" {
		mode = Warn
	}
	return &Checker{key: key, mem: mem, mode: mode, first: map[uint64]seen{}}
}

// Mark returns row p's payee mark; ok is false for a row without a bank
// account (a stored-account token), which gets none.
func (c *Checker) Mark(p *payment.Payment) (m payment.PayeeMark, ok bool, err error) {
	acct, ok := c.key.Account(p)
	if !ok {
		return payment.PayeeMark{}, false, nil
	}
	m = payment.PayeeMark{Payee: c.key.Payee(Name(p)), Account: acct}
	last, known, err := c.mem.LastPaid(m.Payee)
	if err != nil {
		return m, false, fmt.Errorf("payee check: %w", err)
	}
	payee := short(m.Payee)
	first, inFile := c.first[payee]
	switch {
	case known && last.KeyID == acct.KeyID && last.Hash != acct.Hash:
		m.Change = &payment.AccountChange{From: last.Last4, To: acct.Last4, Action: c.mode}
	case inFile && first.account != short(acct.Hash):
		m.Change = &payment.AccountChange{From: first.last4, To: acct.Last4, Action: c.mode}
	}
	if !inFile {
		c.first[payee] = seen{account: short(acct.Hash), last4: acct.Last4}
	}
	return m, true, nil
}
