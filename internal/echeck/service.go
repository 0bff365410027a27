package echeck

import (
	"context"
	"reflect"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/payment"
)

// Service adapts a Client to the domain's payment.Service: it builds the
// create request from a ledger row, turns the wire's Check into the
// domain's, and files every error under the domain's failures, so that
// the jobs never depend on HTTP.
type Service struct{ c *Client }

var _ payment.Service = (*Service)(nil)

// NewService returns the domain adapter of c.
func NewService(c *Client) *Service { return &Service{c: c} }

// CreateCheck creates row's check, with the row's identity.
func (s *Service) CreateCheck(ctx context.Context, row *payment.Row) (*payment.Check, error) {
	return apiwire.Adapt((*Check).Domain)(s.c.CreateCheck(ctx, RequestOf(row)))
}

// ListChecks returns one page of the check list.
func (s *Service) ListChecks(ctx context.Context, q payment.CheckQuery) (*payment.CheckPage, error) {
	return apiwire.Adapt((*CheckPage).Domain)(s.c.ListChecks(ctx, ListParams{
		Label: q.Label, FromDate: q.FromDate, ToDate: q.ToDate,
		Sort: q.Sort, Direction: q.Direction, Page: q.Page, Limit: q.Limit,
	}))
}

// Domain is what the domain keeps of a page of the check list.
func (pg *CheckPage) Domain() *payment.CheckPage {
	out := &payment.CheckPage{CurrentPage: pg.CurrentPage, LastPage: pg.LastPage, PerPage: pg.PerPage,
		Total: pg.Total, Checks: make([]payment.Check, len(pg.Checks))}
	for i := range pg.Checks {
		out.Checks[i] = *pg.Checks[i].Domain()
	}
	return out
}

// GetCheck returns one check; a 404 wraps payment.ErrNotFound.
func (s *Service) GetCheck(ctx context.Context, id string) (*payment.Check, error) {
	return apiwire.Adapt((*Check).Domain)(s.c.GetCheck(ctx, id))
}

// DeleteCheck voids a check.
func (s *Service) DeleteCheck(ctx context.Context, id string) error {
	return apiwire.Domain(s.c.DeleteCheck(ctx, id))
}

// EditCheck replaces check id's fields by row's (RequestOf), bank
// details included.
func (s *Service) EditCheck(ctx context.Context, id string, row *payment.Row) (*payment.Check, error) {
	return apiwire.Adapt((*Check).Domain)(s.c.EditCheck(ctx, id, RequestOf(row)))
}

// Domain is what the domain keeps of a check from the wire. An unreadable
// date gives the zero time.
func (c *Check) Domain() *payment.Check {
	d := &payment.Check{ID: c.CheckID, Label: c.Label, Number: c.Number, Amount: c.Amount,
		Memo: c.Memo, Name: c.Name, Status: payment.ParseStatus(c.Status), LinkID: c.LinkID}
	if t, err := time.Parse(time.DateTime, c.Date); err == nil {
		d.Created = t
	}
	if c.BasicVerification != nil {
		d.Risk = c.BasicVerification.Risk
	}
	if c.FundsConfirmation != nil {
		d.FundConfirmation = c.FundsConfirmation.Verification
	}
	return d
}

// RequestOf builds the create request of a ledger row: every field of its
// payment (payment.Fields), but the schedule of a recurring check only
// when the payment is recurring. The label and number are the row's
// identity, never recomputed here.
func RequestOf(row *payment.Row) CheckRequest {
	var req CheckRequest
	p := &row.Payment
	rv := reflect.ValueOf(&req).Elem()
	for i := range payment.Fields {
		f := &payment.Fields[i]
		if f.Recurrence && !p.Recurring {
			continue
		}
		v := rv.Field(requestFields[i])
		switch f.Kind {
		case payment.Text:
			v.SetString(*f.Text(p))
		case payment.Cents:
			v.SetInt(int64(*f.Cents(p)))
		case payment.Bool:
			v.SetBool(*f.Bool(p))
		case payment.Int:
			n := *f.Int(p) // sent even when 0, which means "indefinitely"
			v.Set(reflect.ValueOf(&n))
		}
	}
	req.Number, req.Label = row.Number, row.Label
	return req
}

// BankName is the name the bank directory gives routing; a routing number
// it does not know (404) wraps payment.ErrNotFound.
func (s *Service) BankName(ctx context.Context, routing string) (string, error) {
	info, err := s.c.BankInfo(ctx, routing)
	if err != nil {
		return "", apiwire.Domain(err)
	}
	return info.Name, nil
}

// TokenizeAccount stores r's bank details with the service (Tokenize)
// and returns the token with the bank's name and the last four digits.
func (s *Service) TokenizeAccount(ctx context.Context, r payment.TokenRequest) (*payment.AccountToken, error) {
	return apiwire.Adapt((*Tokenization).Domain)(s.c.Tokenize(ctx, TokenizeRequest{
		FirstName: r.FirstName, LastName: r.LastName, Email: r.Email, Phone: r.Phone,
		BankAccount: r.Account, BankRouting: r.Routing, Store: r.Store,
	}))
}

// Domain is what the ledger keeps of a tokenization.
func (t *Tokenization) Domain() *payment.AccountToken {
	return &payment.AccountToken{Token: t.Token, Bank: t.Bank, Last4: t.Last4}
}
