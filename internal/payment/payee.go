package payment

import (
	"fmt"
	"time"
)

// PayeeAccount is what batchd keeps of the bank account a payee was last
// paid to: never the number, only its last four digits, its length and a
// keyed hash of routing and account (internal/payee), so that a change can
// be told without the ledger holding the number.
type PayeeAccount struct {
	KeyID  string `json:"key_id"` // the hash key's id: hashes of another key are not compared
	Hash   string `json:"hash"`   // keyed hash of routing and account
	Last4  string `json:"last4"`
	Length int    `json:"length"`
	// Row is the row whose check paid it, and At when that was recorded.
	Row RowKey    `json:"row"`
	At  time.Time `json:"at"`
}

// AccountChange is a row's account differing from the one its payee was
// last paid to (or from an earlier row of the same file).
type AccountChange struct {
	From   string `json:"from"`   // last four digits of the account known
	To     string `json:"to"`     // last four digits of the row's
	Action string `json:"action"` // ingest.on_account_change: warn, hold or allow
}

// PayeeMark is what ingest decided about a row's payee: the payee (a keyed
// hash of its key) and the row's account, remembered as the payee's last
// account when the row's check is created, and any change found.
type PayeeMark struct {
	Payee   string         `json:"payee"`
	Account PayeeAccount   `json:"account"`
	Change  *AccountChange `json:"change,omitempty"`
}

// Held reports whether the mark holds its row (loaded Held).
func (m *PayeeMark) Held() bool { return m != nil && m.Change != nil && m.Change.Action == "hold" }

// PayeeLedger remembers payees' accounts and holds rows whose account
// changed (README "Payee bank-detail changes").
type PayeeLedger interface {
	// LastPaid is the account payee (PayeeMark.Payee) was last paid to;
	// false when batchd never paid it.
	LastPaid(payee string) (PayeeAccount, bool, error)
	// PayeeMarks returns the marks of a batch's rows, by line.
	PayeeMarks(batch uint64) (map[uint32]PayeeMark, error)
	// ApproveHeld makes a held row pending (Approve), noting who approved
	// it, and has the batch's results report written again once done.
	ApproveHeld(k RowKey, who string) (*Row, error)
}

// Masked shows last four digits as a report does: "…1234".
func Masked(last4 string) string { return "…" + last4 }

// Describe says what changed, masked: "…1234 → …5678".
func (c *AccountChange) Describe() string { return Masked(c.From) + " → " + Masked(c.To) }

// HeldReason is a held row's error, in the results report and `batchd
// status`: the change, masked, and the command that releases it.
func HeldReason(c *AccountChange, file string, line int) string {
	return fmt.Sprintf("held: bank details changed from %s to %s; release with batchd release --file %s --line %d",
		Masked(c.From), Masked(c.To), file, line)
}
