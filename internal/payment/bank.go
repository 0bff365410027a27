package payment

import "time"

// Bank is what batchd knows of the bank behind a routing number, from the
// service's bank directory (internal/bankinfo): its name, or that the
// directory knows no bank by that number, and when it was asked.
type Bank struct {
	Routing string    `json:"routing"`
	Name    string    `json:"name,omitempty"`
	Known   bool      `json:"known"` // false: the directory answered that it knows no such bank
	Checked time.Time `json:"checked"`
}

// BankLedger caches the bank directory's answers, by routing number.
type BankLedger interface {
	// Bank returns what was recorded of routing, or nil when nothing was.
	Bank(routing string) (*Bank, error)
	// PutBank records b, replacing what was recorded of its routing.
	PutBank(b Bank) error
}
