package payment

import (
	"context"
	"time"
)

// AccountToken is a payee's bank account as the service stored it
// (spec §2.3): the token that stands in for routing and account on the
// payee's checks, and what the tokenization answered of the account. The
// token is a credential for the account: the ledger seals it at rest like
// an account number, and it is never logged.
type AccountToken struct {
	// Key names the payee and the account the token was made for: a
	// keyed hash of each (internal/tokenize), never the number, so that
	// new bank details of a payee get a new token.
	Key   string    `json:"key"`
	Token string    `json:"token"`
	Bank  string    `json:"bank,omitempty"`  // the bank's name, as the answer gave it
	Last4 string    `json:"last4,omitempty"` // the account's last four digits
	At    time.Time `json:"at"`              // when the token was recorded
}

// TokenLedger keeps the tokens of payees' accounts, by AccountToken.Key.
type TokenLedger interface {
	// AccountToken returns the token recorded under key, or nil when none
	// was, or when no key of the ledger's ring opens it any more: a token
	// is not money, and the account is simply tokenized again.
	AccountToken(key string) (*AccountToken, error)
	// PutAccountToken records t under t.Key, replacing any token there.
	PutAccountToken(t AccountToken) error
}

// TokenRequest is what a tokenization asks for (spec §2.3): the account
// holder's names and contact, the bank details and the store the token
// is kept under. It holds a full account number: never log it.
type TokenRequest struct {
	FirstName, LastName string
	Email, Phone        string
	Routing, Account    string
	Store               string
}

// Tokenizer stores bank details with the service and returns a token for
// them (Token, Bank and Last4 set). Its errors are filed as Service's
// (FailureOf); a lost answer may have issued a token, which is harmless:
// a token is not money.
type Tokenizer interface {
	TokenizeAccount(ctx context.Context, r TokenRequest) (*AccountToken, error)
}
