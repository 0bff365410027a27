package paymentlink

import (
	"context"
	"errors"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/payment"
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
	// PaidThrough lists the checks paid through the link with checkout
	// token token, whatever their date (the check list's link_id filter).
	PaidThrough(ctx context.Context, token string) ([]payment.Check, error)
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

// PaidThrough walks the check list filtered by link_id.
func (s service) PaidThrough(ctx context.Context, token string) ([]payment.Check, error) {
	var out []payment.Check
	for page := 1; page <= walkMaxPages; page++ {
		pg, err := apiwire.Adapt((*echeck.CheckPage).Domain)(s.c.ListChecks(ctx, echeck.ListParams{LinkID: token, Limit: 100, Page: page}))
		if err != nil {
			return nil, err
		}
		out = append(out, pg.Checks...)
		if len(pg.Checks) == 0 || pg.LastPage != 0 && page >= pg.LastPage {
			return out, nil
		}
	}
	return nil, errors.New("the check list filtered by link_id did not end")
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
