package ach

import (
	"context"
	"fmt"
	"strings"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// FundingService adapts a Client to the domain's funding.Service: it
// builds each request from a funding.Request, turns the wire's funding
// sources into the domain's, and files every error under the domain's
// failures (payment.ErrKeyRefused, ErrRefused, ErrNotDone; an unclassified
// one is a lost answer) and funding's refusals, so that onboarding never
// depends on HTTP. It is internal/echeck's Service for the ACH API.
type FundingService struct {
	c        *Client
	provider string
}

var _ funding.Service = (*FundingService)(nil)

// NewFundingService returns the domain adapter of c. provider is the
// processor-token path's word for the bank-linking provider
// (POST /funding-source/processor/{provider}).
func NewFundingService(c *Client, provider string) *FundingService {
	return &FundingService{c: c, provider: provider}
}

// customerPage is the customer list's page size in FindCustomer: the
// service's maximum (spec §8).
const customerPage = 100

// customerWalks bounds the walks of a customer list that changes while
// it is read.
const customerWalks = 3

// CreateCustomer creates a customer. An email the key already has is a
// refusal (payment.ErrRefused): whether that customer is the row's is
// onboarding's decision, by FindCustomer.
func (s *FundingService) CreateCustomer(ctx context.Context, cu funding.Customer) (string, error) {
	return apiwire.Adapt(func(u *User) string { return u.ID })(s.c.CreateUser(ctx,
		UserRequest{FirstName: cu.FirstName, LastName: cu.LastName, Email: cu.Email, Phone: cu.Phone}))
}

// FindCustomer walks the whole customer list for email (compared as
// funding.EmailKey). A walk is complete only when it has seen as many
// distinct customers as the largest total a page reported; a list that
// moves under the walk is read again (bounded), and one that never
// settles is an error wrapping payment.ErrNotDone, never "not found":
// a customer missed would be created twice.
func (s *FundingService) FindCustomer(ctx context.Context, email string) (string, bool, error) {
	want := funding.EmailKey(email)
	for try := 1; ; try++ {
		id, seen, total, err := s.walkCustomers(ctx, want)
		switch {
		case err != nil:
			return "", false, err
		case id != "":
			return id, true, nil
		case seen >= total:
			return "", false, nil
		case try >= customerWalks:
			return "", false, fmt.Errorf("%w: %w: the customer list showed %d distinct customers of %d after %d walks",
				payment.ErrService, payment.ErrNotDone, seen, total, try)
		}
	}
}

// walkCustomers reads the customer list once, oldest first, stopping at
// the first customer with email want. It returns that customer, or how
// many distinct customers it saw and the largest total a page reported.
func (s *FundingService) walkCustomers(ctx context.Context, want string) (id string, seen, total int, err error) {
	ids := map[string]bool{}
	for page := 1; ; page++ {
		pg, err := s.c.ListUsers(ctx, page, customerPage)
		if err != nil {
			return "", 0, 0, apiwire.Domain(err)
		}
		total = max(total, pg.Total)
		for _, u := range pg.Users {
			if funding.EmailKey(u.Email) == want && want != "" {
				return u.ID, 0, 0, nil
			}
			ids[u.ID] = true
		}
		if len(pg.Users) == 0 || page >= pg.LastPage {
			return "", len(ids), total, nil
		}
	}
}

// CreateSource creates the funding source of r for customer userID by
// its method: on demand, for micro-deposits (Pending, not initiated), or
// by exchanging its processor token.
func (s *FundingService) CreateSource(ctx context.Context, userID string, r *funding.Request) (*funding.Source, error) {
	var fs *FundingSource
	var err error
	req := FundingSourceRequest{UserID: userID, Routing: r.Routing, Account: r.Account,
		Type: strings.ToLower(r.AccountType), Nickname: r.Nickname}
	switch r.Method {
	case funding.OnDemand:
		fs, err = s.c.CreateOnDemandFundingSource(ctx, req)
	case funding.MicroDeposits:
		if req.Type == "" {
			req.Type = Checking // the on-demand endpoint's default, for the one that requires it
		}
		fs, err = s.c.CreateFundingSource(ctx, req)
	case funding.Processor:
		fs, err = s.c.CreateProcessorFundingSource(ctx, s.provider, userID, r.ProcessorToken)
	default:
		return nil, fmt.Errorf("%w: %w: a %q row creates no funding source", payment.ErrService, payment.ErrRefused, r.Method)
	}
	return apiwire.Adapt(func(fs *FundingSource) *funding.Source {
		out := fs.Domain()
		if out.UserID == "" {
			out.UserID = userID
		}
		return out
	})(fs, err)
}

// Sources lists every funding source of a customer, deleted ones too.
func (s *FundingService) Sources(ctx context.Context, userID string) ([]funding.Source, error) {
	return apiwire.Adapt(domainSources)(s.c.ListFundingSources(ctx, userID))
}

// domainSources is what the domain keeps of a list of funding sources.
func domainSources(list []FundingSource) []funding.Source {
	out := make([]funding.Source, len(list))
	for i := range list {
		out[i] = *list[i].Domain()
	}
	return out
}

// Source reads one funding source; an unknown one is a refusal that also
// wraps payment.ErrNotFound.
func (s *FundingService) Source(ctx context.Context, id string) (*funding.Source, error) {
	return apiwire.Adapt((*FundingSource).Domain)(s.c.GetFundingSource(ctx, id))
}

// InitiateVerification sends a Pending source its micro-deposits; from
// funding.DeprecationDate it wraps funding.ErrDeprecated.
func (s *FundingService) InitiateVerification(ctx context.Context, sourceID string) error {
	_, err := s.c.InitiateVerification(ctx, sourceID)
	return apiwire.Domain(err)
}

// Verify completes a micro-deposit verification. The answer names the
// source and its status only.
func (s *FundingService) Verify(ctx context.Context, sourceID string, amounts [2]money.Cents) (*funding.Source, error) {
	return apiwire.Adapt(func(v *Verification) *funding.Source {
		return &funding.Source{ID: v.SourceID, Status: domainStatus(v.StatusText, v.Status)}
	})(s.c.Verify(ctx, sourceID, amounts[0], amounts[1]))
}

// Domain is what the domain keeps of a funding source from the wire.
func (fs *FundingSource) Domain() *funding.Source {
	return &funding.Source{ID: fs.ID, UserID: fs.UserID, Status: domainStatus(fs.StatusText, fs.Status),
		Primary: fs.Primary, Routing: fs.Routing, LastFour: fs.Last4, BankName: fs.Bank, Type: fs.Type,
		Created: fs.Created}
}

// domainStatus reads the status word as sent, which keeps a word neither
// side knows visible; the typed status stands in when none was sent.
func domainStatus(text string, st Status) funding.Status {
	if strings.TrimSpace(text) == "" && st != StatusUnknown {
		text = st.String()
	}
	return funding.ParseStatus(text)
}

// domainKinds is the table from the client's own conditions to the
// domain's sentinels that a row's outcome depends on: payment.ErrNotFound
// for a customer, source or account that does not exist (an unknown
// endpoint is not ErrNotFound), and funding.ErrCustomerNotFound for a
// customer that is unknown or another merchant's. funding's other
// refusals are the client's conditions themselves (kindsOf).
// apiwire.Domain adds payment.ErrService and the failure of the error's
// class.
var domainKinds = []struct{ wire, domain error }{
	{ErrNotFound, payment.ErrNotFound},
	{ErrCustomerNotFound, funding.ErrCustomerNotFound},
	{ErrNotOwner, funding.ErrCustomerNotFound},
}
