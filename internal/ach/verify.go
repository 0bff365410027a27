package ach

import (
	"context"
	"errors"
	"github.com/batchd/batchd/internal/apiwire"

	"github.com/batchd/batchd/internal/money"
)

// Verification is the answer to a micro-deposit step: the source and its
// status afterwards (Pending after initiation, Verified after a matching
// verify), and the service's message.
type Verification struct {
	SourceID   string
	Status     Status
	StatusText string // as sent
	Message    string
}

// InitiateVerification asks the service to send the two micro-deposits to
// a Pending source. From 2026-06-08 it is funding.ErrDeprecated (410) for a source
// whose verification was not initiated before; link the account with
// CreateProcessorFundingSource instead. A lost answer is Ambiguous: look
// the source up, or try Verify, before initiating again.
func (c *Client) InitiateVerification(ctx context.Context, sourceID string) (*Verification, error) {
	k := apiwire.Call{Op: OpVerificationInitiate, Method: "POST", Path: "/funding-source/initiate/verification",
		Body: map[string]string{"funding_source_id": sourceID}, Effect: true}
	if err := validID("funding source id", sourceID); err != nil {
		return nil, c.core.Refuse(k, "not sent", err)
	}
	return c.verification(ctx, k, sourceID)
}

// Verify submits the two micro-deposit amounts, in cents, as the customer
// read them from the bank statement; they travel as exact decimal numbers
// of dollars. A match makes the source Verified. A mismatch is
// ErrWrongAmounts while tries are left, then ErrTooManyAttempts with the
// source VerificationFailed; so a lost answer is Ambiguous (a try may have
// been spent) and the caller should look the source up before resending.
func (c *Client) Verify(ctx context.Context, sourceID string, amount1, amount2 money.Cents) (*Verification, error) {
	k := apiwire.Call{Op: OpVerify, Method: "POST", Path: "/funding-source/verify", Effect: true,
		Body: struct {
			ID      string        `json:"funding_source_id"`
			Amounts []money.Cents `json:"amounts"`
		}{sourceID, []money.Cents{amount1, amount2}}}
	if err := validID("funding source id", sourceID); err != nil {
		return nil, c.core.Refuse(k, "not sent", err)
	}
	if amount1 <= 0 || amount2 <= 0 {
		return nil, c.core.Refuse(k, "not sent", errors.New("micro-deposit amounts must be positive"))
	}
	return c.verification(ctx, k, sourceID)
}

func (c *Client) verification(ctx context.Context, k apiwire.Call, sourceID string) (*Verification, error) {
	a, err := c.core.Do(ctx, k)
	if err != nil {
		return nil, err
	}
	f := fields{m: inner(a.Object, "funding_source")}
	v := &Verification{
		SourceID:   f.strictStr("funding_source_id", "source_id", "id"),
		StatusText: f.strictStr("status"),
		Message:    (&fields{m: a.Object}).str("message"),
	}
	if f.err != nil {
		return nil, c.core.BadAnswer(k, a.Status, f.err)
	}
	if v.StatusText == "" {
		v.StatusText = (&fields{m: a.Object}).str("status")
	}
	if v.SourceID == "" {
		v.SourceID = sourceID
	}
	v.Status = ParseStatus(v.StatusText)
	return v, nil
}
