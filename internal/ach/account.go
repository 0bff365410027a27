package ach

import (
	"context"
	"errors"
	"net/url"

	"github.com/batchd/batchd/internal/apiwire"
)

// Availability tells whether an account number may be linked to a new
// customer (spec 2.5: an account belongs to at most one customer at a
// time). UserID is the current owner, given only when it is one of the
// caller's own customers.
type Availability struct {
	Available bool
	UserID    string
}

// AccountAvailable asks whether an account is free to link. The account
// number travels in the query (the contract's GET), and is masked in
// every error, the URL net/http quotes included.
func (c *Client) AccountAvailable(ctx context.Context, routing, account string) (*Availability, error) {
	k := apiwire.Call{Op: OpAccountAvailable, Method: "GET", Path: "/accounts",
		Query:    url.Values{"routing_number": {routing}, "account_number": {account}},
		Accounts: []string{account}}
	if err := checkAccount(routing, account); err != nil {
		return nil, c.core.Refuse(k, "not sent", err)
	}
	a, err := c.core.Do(ctx, k)
	if err != nil {
		return nil, err
	}
	f := fields{m: a.Object}
	v, present := f.strictBool("available")
	if f.err == nil && !present {
		f.err = errors.New("no \"available\" in the answer")
	}
	if f.err != nil {
		return nil, c.core.BadAnswer(k, a.Status, f.err)
	}
	return &Availability{Available: v, UserID: f.str("user_id", "customer_id")}, nil
}

// DeleteAccount removes an account from the caller's customer who holds
// it, freeing it for another customer; its funding source becomes
// deleted. ErrNotFound when no customer of the caller holds it. Sending it
// twice leaves the same state, so a lost answer is Retryable (the second
// try may then be ErrNotFound).
func (c *Client) DeleteAccount(ctx context.Context, routing, account string) error {
	k := apiwire.Call{Op: OpAccountDelete, Method: "POST", Path: "/accounts/delete",
		Body:     map[string]string{"routing_number": routing, "account_number": account},
		Accounts: []string{account}}
	if err := checkAccount(routing, account); err != nil {
		return c.core.Refuse(k, "not sent", err)
	}
	_, err := c.core.Do(ctx, k)
	return err
}

// checkAccount refuses bank data that could only fail, without quoting
// the account number.
func checkAccount(routing, account string) error {
	switch {
	case len(routing) != 9 || !apiwire.IsDigits(routing):
		return errors.New("routing_number must be 9 digits")
	case len(account) < 4 || len(account) > 17 || !apiwire.IsDigits(account):
		return errors.New("account_number must be 4 to 17 digits")
	}
	return nil
}
