package echeck

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/money"
)

// PaymentLinkRequest holds the fields of a payment link (spec 2.2), the
// one declaration the client and the payment-link kind share
// (paymentlink.Request). All are optional; a zero value is not sent.
// Amount, when set, is sent as an exact JSON number; Recurring as
// recurring=1 (paymentLinkRequestWire); RecurringInstallments 0 means
// indefinitely, so nil is "not sent".
type PaymentLinkRequest struct {
	Amount                money.Cents `json:"amount,omitempty"`
	Memo                  string      `json:"memo,omitempty"`
	ThankYouURL           string      `json:"thank_you_url,omitempty"`
	ErrorURL              string      `json:"error_url,omitempty"`
	Recurring             bool        `json:"recurring,omitempty"`
	RecurringCycle        string      `json:"recurring_cycle,omitempty"`
	RecurringStartDate    string      `json:"recurring_start_date,omitempty"`
	RecurringInstallments *int        `json:"recurring_installments,omitempty"`
	FundConfirmation      bool        `json:"fund_confirmation,omitempty"`
	BasicVerification     bool        `json:"basic_verification,omitempty"`
	IsBankAuth            bool        `json:"is_bankauth,omitempty"`
	SignatureRequired     bool        `json:"signature_required,omitempty"`
	SubmitForApproval     bool        `json:"submit_for_approval,omitempty"`
}

// paymentLinkRequestWire is the request as sent: Recurring as 1, its
// field shadowing the embedded one's (encoding/json takes the shallower).
type paymentLinkRequestWire struct {
	PaymentLinkRequest
	Recurring *int `json:"recurring,omitempty"`
}

// PaymentLink is a payment link as the service returns it. Only the
// token is documented; Link, Amount and Memo are what public clients show
// in the create answer ("checkout_link": {...}). Status and CreatedAt are
// guesses for the list, read if present. Raw keeps the whole object.
type PaymentLink struct {
	CheckoutToken string
	Link          string
	Amount        money.Cents
	Memo          string
	Status        string
	CreatedAt     string
	Raw           map[string]json.RawMessage
}

// PaymentLinkPage is one page of the payment link list. The spec does not
// show it; the client assumes the check list's envelope (see ListChecks)
// with payment links as entries.
type PaymentLinkPage struct {
	Paging
	Links []PaymentLink
}

// paymentLinkFrom reads a payment link; the token and amount are strict.
func paymentLinkFrom(m object) (PaymentLink, error) {
	var err error
	l := PaymentLink{
		CheckoutToken: apiwire.Field[string](m, "checkout_token", &err),
		Amount:        apiwire.Field[money.Cents](m, "amount", &err),
		Link:          firstText(m, "link", "url", "checkout_link"),
		Memo:          firstText(m, "memo"),
		Status:        firstText(m, "status"),
		CreatedAt:     firstText(m, "created_at"),
		Raw:           m,
	}
	return l, err
}

// paymentLinkEntry reads one entry of the payment link list.
func paymentLinkEntry(m *object) (PaymentLink, error) { return paymentLinkFrom(*m) }

// CreatePaymentLink creates a hosted payment page. Like CreateCheck, an
// Ambiguous error means the link may exist.
func (c *Client) CreatePaymentLink(ctx context.Context, r PaymentLinkRequest) (*PaymentLink, error) {
	k := apiwire.Call{Op: OpPaymentLinkCreate, Method: "POST", Path: "/v1/paymentlink/create", Effect: true,
		Result: "checkout_link", Body: paymentLinkRequestWire{PaymentLinkRequest: r, Recurring: flag01(r.Recurring)}}
	if r.Amount < 0 {
		return nil, c.core.Refuse(k, fmt.Sprintf("not sent: amount %s is negative", r.Amount), nil)
	}
	a, err := c.core.Do(ctx, k)
	if err != nil {
		return nil, err
	}
	m, err := apiwire.DecodeObject(envelopeOf(a, "checkout_link", "checkout_token"))
	l, err2 := paymentLinkFrom(m)
	if err = cmp.Or(err, err2); err == nil && l.CheckoutToken == "" {
		err = errors.New("no checkout_token in the answer")
	}
	if err != nil {
		return nil, c.core.BadAnswer(k, a.Status, err)
	}
	return &l, nil
}

// ListPaymentLinks returns one page of payment links. Only Limit, Page,
// Sort and Direction of p apply.
func (c *Client) ListPaymentLinks(ctx context.Context, p ListParams) (*PaymentLinkPage, error) {
	k := apiwire.Call{Op: OpPaymentLinkList, Method: "GET", Path: "/v1/paymentlink/list"}
	pg, links, err := list(ctx, c, k, p, false, paymentLinkEntry)
	if err != nil {
		return nil, err
	}
	return &PaymentLinkPage{Paging: pg, Links: links}, nil
}

// ChangePaymentLinkStatus deactivates (deletes) the payment link with the
// given checkout token. The spec does not show the answer; the client
// takes any 2xx whose body does not flag an error as success.
func (c *Client) ChangePaymentLinkStatus(ctx context.Context, token string) error {
	k := apiwire.Call{Op: OpPaymentLinkChangeStatus, Method: "DELETE",
		Path: "/v1/paymentlink/changestatus/" + url.PathEscape(token)}
	if err := apiwire.ValidID(token); err != nil {
		return c.core.Refuse(k, "not sent: checkout token", err)
	}
	_, err := c.core.Do(ctx, k)
	return err
}
