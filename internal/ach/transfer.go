package ach

import (
	"context"
	"errors"
	"fmt"
	"github.com/batchd/batchd/internal/apiwire"

	"github.com/batchd/batchd/internal/money"
)

// TransferRequest is a direct debit (from SourceID, the sender) or credit
// (to SourceID, the recipient). Amount is in cents and travels as the
// contract's decimal string ("25.00").
type TransferRequest struct {
	SourceID    string
	Name        string
	Amount      money.Cents
	Description string // <= 128 characters
	Label       string
}

// Transfer is the service's answer to a debit or credit: the check it
// made for the transfer.
type Transfer struct {
	CheckID string
	Status  string // as sent, when the service sent one
}

// transferWire is the body of /ach-debit and /check/send; only the name of
// the source member differs.
type transferWire struct {
	Sender      string `json:"sender,omitempty"`
	Recipient   string `json:"recipient,omitempty"`
	Name        string `json:"name,omitempty"`
	Amount      string `json:"amount"`
	Description string `json:"description,omitempty"`
	Label       string `json:"label,omitempty"`
}

// Debit pulls Amount from a Verified funding source (ErrNotVerified
// otherwise). A lost answer is Ambiguous: money may have moved.
func (c *Client) Debit(ctx context.Context, r TransferRequest) (*Transfer, error) {
	w := transferWire{Sender: r.SourceID, Name: r.Name, Amount: r.Amount.String(), Description: r.Description, Label: r.Label}
	return c.transfer(ctx, apiwire.Call{Op: OpDebit, Method: "POST", Path: "/ach-debit", Body: w, Effect: true}, r)
}

// Credit pays Amount to an Unverified or Verified funding source. A lost
// answer is Ambiguous: money may have moved.
func (c *Client) Credit(ctx context.Context, r TransferRequest) (*Transfer, error) {
	w := transferWire{Recipient: r.SourceID, Name: r.Name, Amount: r.Amount.String(), Description: r.Description, Label: r.Label}
	return c.transfer(ctx, apiwire.Call{Op: OpCredit, Method: "POST", Path: "/check/send", Body: w, Effect: true}, r)
}

func (c *Client) transfer(ctx context.Context, k apiwire.Call, r TransferRequest) (*Transfer, error) {
	if r.SourceID == "" {
		return nil, c.core.Refuse(k, "not sent", errors.New("funding source id is empty"))
	}
	if r.Amount <= 0 {
		return nil, c.core.Refuse(k, "not sent", fmt.Errorf("amount %s is not positive", r.Amount))
	}
	a, err := c.core.Do(ctx, k)
	if err != nil {
		return nil, err
	}
	f := fields{m: inner(a.Object, "check", "transaction", "data")}
	t := &Transfer{CheckID: f.strictStr("check_id", "transaction_id", "id"), Status: f.str("status")}
	if t.CheckID == "" && f.err == nil {
		t.CheckID = (&fields{m: a.Object}).strictStr("check_id")
	}
	if f.err == nil && t.CheckID == "" {
		f.err = errors.New("no check_id in the answer")
	}
	if f.err != nil {
		return nil, c.core.BadAnswer(k, a.Status, f.err)
	}
	return t, nil
}
