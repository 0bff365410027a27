package echeck

import (
	"context"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/payment"
)

var _ payment.LinkService = (*Service)(nil)

// CreateLink creates a payment link; an error is filed under the domain's
// failures as a check create's is (a lost answer may have made the link).
func (s *Service) CreateLink(ctx context.Context, r payment.LinkRequest) (*payment.PaymentLink, error) {
	return apiwire.Adapt((*PaymentLink).Domain)(s.c.CreatePaymentLink(ctx, r))
}

// ListLinks returns one page of 100 payment links, searched when search
// is not "".
func (s *Service) ListLinks(ctx context.Context, search string, page int) (*payment.LinkPage, error) {
	return apiwire.Adapt((*PaymentLinkPage).Domain)(s.c.ListPaymentLinks(ctx, ListParams{Limit: 100, Page: page, Search: search}))
}

// CancelLink deactivates a payment link (change-status); a 404 wraps
// payment.ErrNotFound.
func (s *Service) CancelLink(ctx context.Context, token string) error {
	return apiwire.Domain(s.c.ChangePaymentLinkStatus(ctx, token))
}

// Domain is what the domain keeps of a payment link.
func (l *PaymentLink) Domain() *payment.PaymentLink {
	return &payment.PaymentLink{Token: l.CheckoutToken, URL: l.Link, Amount: l.Amount, Memo: l.Memo, Status: l.Status}
}

// Domain is what the domain keeps of a page of the link list.
func (pg *PaymentLinkPage) Domain() *payment.LinkPage {
	out := &payment.LinkPage{Page: pg.CurrentPage, LastPage: pg.LastPage, Links: make([]payment.PaymentLink, len(pg.Links))}
	for i := range pg.Links {
		out.Links[i] = *pg.Links[i].Domain()
	}
	return out
}
