// Package payment defines one payment instruction as batchd holds it: the
// fields of a check create (spec section 2.1), with the amount in exact
// cents. Ingest produces it, the state ledger stores it, and submit turns it
// into an API request; it imports nothing of theirs, so all three can share
// it.
package payment

import "github.com/batchd/batchd/internal/money"

// Payment is one valid row of a payment file. String fields hold the
// values as validated (trimmed); an empty string means "not given".
type Payment struct {
	Number                string      `json:"number,omitempty"`
	Amount                money.Cents `json:"amount"`
	Memo                  string      `json:"memo"`
	Name                  string      `json:"name"`
	Email                 string      `json:"email,omitempty"`
	AuthorizationDate     string      `json:"authorization_date,omitempty"`
	Label                 string      `json:"label,omitempty"`
	Phone                 string      `json:"phone,omitempty"`
	Address               string      `json:"address,omitempty"`
	City                  string      `json:"city,omitempty"`
	State                 string      `json:"state,omitempty"`
	Zip                   string      `json:"zip,omitempty"`
	BankAccount           string      `json:"bank_account,omitempty"`
	BankRouting           string      `json:"bank_routing,omitempty"`
	Token                 string      `json:"token,omitempty"`
	Store                 string      `json:"store,omitempty"`
	TypeInfo              string      `json:"type_info,omitempty"`
	Recurring             bool        `json:"recurring,omitempty"`
	RecurringCycle        string      `json:"recurring_cycle,omitempty"`
	RecurringStartDate    string      `json:"recurring_start_date,omitempty"`
	RecurringInstallments int         `json:"recurring_installments,omitempty"`
	VerifyBeforeSave      bool        `json:"verify_before_save,omitempty"`
	FundConfirmation      bool        `json:"fund_confirmation,omitempty"`

	// AccountLast4 is what remains of BankAccount once the row no longer
	// needs the full number (see state: a final row is scrubbed).
	AccountLast4 string `json:"account_last4,omitempty"`

	// PayeeID is the file's payee_id cell: the payee, for the bank-detail
	// check (internal/payee), instead of the name and e-mail. It is no
	// check field (not in Fields): never sent, and not kept by the
	// ledger's row codec, only as a keyed hash in the row's payee mark.
	PayeeID string `json:"payee_id,omitempty"`

	// FirstName and LastName are the file's first_name and last_name
	// cells: the account holder's names a tokenization asks for (spec
	// §2.3; internal/tokenize splits Name when they are not given). No
	// check field (not in Fields): never sent with a check, kept by the
	// ledger until the row is sent.
	FirstName string `json:"first_name,omitempty"`
	LastName  string `json:"last_name,omitempty"`
}
