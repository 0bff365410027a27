package paymentlink

import (
	"context"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
)

// Service is what the kind needs of the service's payment links. Errors
// are classified as payment.Service's are (payment.FailureOf).
type Service interface {
	CreateLink(ctx context.Context, r Request) (*Link, error)
	// ListLinks returns one page (from 1) of the link list, searched by
	// search when it is not "". The service's search matches memos,
	// amounts or dates loosely, so a caller compares what it finds; a
	// service that refuses the search answers FailRefused.
	ListLinks(ctx context.Context, search string, page int) (*Page, error)
	// CancelLink deactivates the link with checkout token token, so that
	// no payer can pay through it; doing it again changes nothing. An
	// unknown token is an error that Is payment.ErrNotFound.
	CancelLink(ctx context.Context, token string) error
}

// NewService is Service over the eCheck client's payment-link endpoints.
func NewService(c *echeck.Client) Service { return service{c} }

type service struct{ c *echeck.Client }

// CreateLink creates a payment link; an error is filed under the domain's
// failures as a check create's is (a lost answer may have made the link).
func (s service) CreateLink(ctx context.Context, r Request) (*Link, error) {
	return apiwire.Adapt(linkOf)(s.c.CreatePaymentLink(ctx, r))
}

// ListLinks returns one page of 100 payment links, searched when search
// is not "".
func (s service) ListLinks(ctx context.Context, search string, page int) (*Page, error) {
	return apiwire.Adapt(pageOf)(s.c.ListPaymentLinks(ctx, echeck.ListParams{Limit: 100, Page: page, Search: search}))
}

// CancelLink deactivates a payment link (change-status); a 404 wraps
// payment.ErrNotFound.
func (s service) CancelLink(ctx context.Context, token string) error {
	return apiwire.Domain(s.c.ChangePaymentLinkStatus(ctx, token))
}

func linkOf(l *echeck.PaymentLink) *Link {
	return &Link{Token: l.CheckoutToken, URL: l.Link, Amount: l.Amount, Memo: l.Memo, Status: l.Status}
}

func pageOf(pg *echeck.PaymentLinkPage) *Page {
	out := &Page{Page: pg.CurrentPage, LastPage: pg.LastPage, Links: make([]Link, len(pg.Links))}
	for i := range pg.Links {
		out.Links[i] = *linkOf(&pg.Links[i])
	}
	return out
}
