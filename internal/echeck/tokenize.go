package echeck

import (
	"context"
	"errors"
	"github.com/batchd/batchd/internal/apiwire"

	"github.com/batchd/batchd/internal/redact"
)

// TokenizeRequest holds the account details to store (spec 2.3). The
// token returned stands in for BankAccount and BankRouting on later
// checks, together with Store.
type TokenizeRequest struct {
	FirstName   string `json:"first_name"`
	LastName    string `json:"last_name"`
	Email       string `json:"email,omitempty"`
	Phone       string `json:"phone,omitempty"`
	BankAccount string `json:"bank_account"`
	BankRouting string `json:"bank_routing"`
	Store       string `json:"store"`
}

// Tokenization is the answer to a tokenization, as public clients show it:
// {"tokenization": {"token", "bank", "routing", "last4", "name"}}. The
// token is a credential for the account: keep it out of logs.
type Tokenization struct {
	Token   string
	Bank    string
	Routing string
	Last4   string
	Name    string
}

// Tokenize stores account details with the service and returns a token for
// them. It counts as a create: an Ambiguous error means a token may have
// been issued.
func (c *Client) Tokenize(ctx context.Context, r TokenizeRequest) (*Tokenization, error) {
	k := apiwire.Call{Op: OpTokenize, Method: "POST", Path: "/v1/account/tokenization", Body: r,
		Effect: true, Result: "tokenization", Accounts: []string{r.BankAccount}}
	a, err := c.core.Do(ctx, k)
	if err != nil {
		return nil, err
	}
	m, err := apiwire.DecodeObject(envelopeOf(a, "tokenization", "token"))
	t := &Tokenization{
		Token:   apiwire.Field[string](m, "token", &err),
		Bank:    firstText(m, "bank", "bank_name"),
		Routing: firstText(m, "routing", "bank_routing"),
		Last4:   firstText(m, "last4"),
		Name:    firstText(m, "name"),
	}
	if err == nil && t.Token == "" {
		err = errors.New("no token in the answer")
	}
	if err != nil {
		return nil, c.core.BadAnswer(k, a.Status, err)
	}
	if len(t.Last4) > 4 { // never keep more of an account than its last four
		t.Last4 = redact.Last4(t.Last4)
	}
	return t, nil
}
