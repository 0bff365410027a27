package ach

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/redact"
)

// Account types of a funding source.
const (
	Checking = "checking"
	Savings  = "savings"
)

// FundingSourceRequest links a bank account to a customer, by
// CreateFundingSource (micro-deposit verification) or
// CreateOnDemandFundingSource. Account is a full account number: it is
// masked in every error, and String and LogValue mask it, so that logging
// a request does not leak it.
type FundingSourceRequest struct {
	UserID   string `json:"user_id"`
	Routing  string `json:"routing_number"`
	Account  string `json:"account_number"`
	Type     string `json:"account_type,omitempty"` // Checking or Savings; required but on demand
	Nickname string `json:"nickname,omitempty"`
}

// String shows the request with the account number masked.
func (r FundingSourceRequest) String() string {
	return fmt.Sprintf("{user %s routing %s account %s type %s nickname %q}",
		r.UserID, r.Routing, maskAccount(r.Account), r.Type, r.Nickname)
}

// LogValue shows the request in a log with the account number masked.
func (r FundingSourceRequest) LogValue() slog.Value {
	return slog.GroupValue(slog.String("user_id", r.UserID), slog.String("routing", r.Routing),
		slog.String("account", maskAccount(r.Account)), slog.String("type", r.Type))
}

func maskAccount(a string) string {
	if a == "" {
		return ""
	}
	return redact.Account(a)
}

// FundingSource is a customer's bank account as the service shows it. ID
// is read from source_id, funding_source_id or id; the account number is
// never kept beyond Last4.
type FundingSource struct {
	ID     string
	UserID string
	Status Status
	// StatusText is the status word exactly as sent ("verified",
	// "Pending", ...), for a message or a word Status does not know.
	StatusText string
	Primary    bool
	Routing    string
	Bank       string
	Last4      string
	Type       string // checking or savings
	Nickname   string
	Created    time.Time // zero when the service sent none or an unknown form
}

// CreateFundingSource links an account for micro-deposit verification:
// the new source is Pending. An Ambiguous error means it may exist:
// ListFundingSources tells (a second create of the same account for the
// same customer is ErrAlreadyLinked).
func (c *Client) CreateFundingSource(ctx context.Context, r FundingSourceRequest) (*FundingSource, error) {
	k := c.sourceCall(OpSourceCreate, "/funding-source", r)
	if err := checkSourceRequest(r, true); err != nil {
		return nil, c.core.Refuse(k, "not sent", err)
	}
	return apiwire.About(ctx, c.core, k, sourceAnswer, "")
}

// CreateOnDemandFundingSource links an account without micro-deposits. By
// the service's rule the source is Verified when the account is enabled
// for third-party verification, and Unverified (credits only) otherwise;
// the caller reads Status to know which. Type may be empty (checking).
func (c *Client) CreateOnDemandFundingSource(ctx context.Context, r FundingSourceRequest) (*FundingSource, error) {
	k := c.sourceCall(OpSourceCreateOnDemand, "/on-demand/funding-source", r)
	if err := checkSourceRequest(r, false); err != nil {
		return nil, c.core.Refuse(k, "not sent", err)
	}
	return apiwire.About(ctx, c.core, k, sourceAnswer, "")
}

func (c *Client) sourceCall(op, path string, r FundingSourceRequest) apiwire.Call {
	return apiwire.Call{Op: op, Method: "POST", Path: path, Body: r, Effect: true, Result: "funding_source",
		Accounts: []string{r.Account}}
}

// checkSourceRequest refuses what could only fail, without quoting the
// account number.
func checkSourceRequest(r FundingSourceRequest, needType bool) error {
	switch {
	case r.UserID == "":
		return errors.New("user_id is empty")
	case len(r.Routing) != 9 || !apiwire.IsDigits(r.Routing):
		return errors.New("routing_number must be 9 digits")
	case len(r.Account) < 4 || len(r.Account) > 17 || !apiwire.IsDigits(r.Account):
		return errors.New("account_number must be 4 to 17 digits")
	case needType && r.Type == "":
		return errors.New("account_type is empty")
	}
	return nil
}

// CreateProcessorFundingSource exchanges a processor token, issued by the
// bank-linking provider for one account, for a Verified funding source
// that becomes the customer's primary one. provider is the path's
// lowercase word for the provider. The token never appears in an error.
// A token is exchanged once, so after an Ambiguous error a second
// exchange is funding.ErrInvalidToken: look at ListFundingSources.
func (c *Client) CreateProcessorFundingSource(ctx context.Context, provider, userID, token string) (*FundingSource, error) {
	k := apiwire.Call{Op: OpSourceCreateProcessor, Method: "POST", Path: "/funding-source/processor/" + url.PathEscape(provider),
		Body:   map[string]string{"user_id": userID, "processor_token": token},
		Effect: true, Result: "funding_source", Tokens: []string{token}}
	switch {
	case provider == "" || len(provider) > 64 || strings.Trim(provider, "abcdefghijklmnopqrstuvwxyz0123456789") != "":
		return nil, c.core.Refuse(k, "not sent", fmt.Errorf("provider %q: want a lowercase word", apiwire.Excerpt(provider)))
	case userID == "":
		return nil, c.core.Refuse(k, "not sent", errors.New("user_id is empty"))
	case strings.TrimSpace(token) == "":
		return nil, c.core.Refuse(k, "not sent", errors.New("processor_token is empty"))
	}
	return apiwire.About(ctx, c.core, k, sourceAnswer, "")
}

// ListFundingSources returns every funding source of a customer, oldest
// first, deleted ones included (StatusDeleted).
func (c *Client) ListFundingSources(ctx context.Context, userID string) ([]FundingSource, error) {
	k := apiwire.Call{Op: OpSourceList, Method: "GET", Path: "/funding-source/user/:" + url.PathEscape(userID)}
	if err := validID("user id", userID); err != nil {
		return nil, c.core.Refuse(k, "not sent", err)
	}
	a, err := c.core.Do(ctx, k)
	if err != nil {
		return nil, err
	}
	_, items, err := pageOf(a.Object)
	for _, key := range []string{"funding_sources", "sources"} {
		if err == nil && len(items) == 0 {
			items, err = apiwire.ListOf(a.Object[key])
		}
	}
	var out []FundingSource
	if err == nil {
		out, err = entries(items, sourceFrom, func(s *FundingSource) error {
			if s.ID == "" {
				return errors.New("no source_id")
			}
			if s.UserID == "" {
				s.UserID = userID
			}
			return nil
		})
	}
	if err != nil {
		return nil, c.core.BadAnswer(k, a.Status, err)
	}
	return out, nil
}

// GetFundingSource fetches one funding source; an unknown one or another
// key's is ErrNotFound.
func (c *Client) GetFundingSource(ctx context.Context, id string) (*FundingSource, error) {
	k := apiwire.Call{Op: OpSourceGet, Method: "GET", Path: "/funding-source/:" + url.PathEscape(id), Result: "funding_source"}
	if err := validID("funding source id", id); err != nil {
		return nil, c.core.Refuse(k, "not sent", err)
	}
	return apiwire.About(ctx, c.core, k, sourceAnswer, id)
}

// RemoveFundingSource deletes a customer's funding source: its status
// becomes deleted and the account is free for another customer. Sending
// it twice leaves the same state, so a lost answer is Retryable.
func (c *Client) RemoveFundingSource(ctx context.Context, userID, sourceID string) error {
	k := apiwire.Call{Op: OpSourceRemove, Method: "POST", Path: "/funding-source/remove",
		Body: map[string]string{"user_id": userID, "source_id": sourceID}}
	if userID == "" || sourceID == "" {
		return c.core.Refuse(k, "not sent", errors.New("user_id and source_id are required"))
	}
	_, err := c.core.Do(ctx, k)
	return err
}

// sourceAnswer reads the funding source an answer is about
// (apiwire.About).
var sourceAnswer = apiwire.Subject[FundingSource]{What: "funding source", Field: "funding_source_id",
	Read: func(a apiwire.Answer) (FundingSource, string, error) {
		s, err := sourceOf(a.Object)
		return s, s.ID, err
	}}

// sourceOf reads the funding source of an answer: the object under
// "funding_source" (or "source", "data") completed by the top level's
// funding_source_id, status, bank_name and last_four, which the contract
// puts beside it; or the top level alone.
func sourceOf(top object) (FundingSource, error) {
	s, err := sourceFrom(inner(top, "funding_source", "source", "data"))
	if err != nil {
		return s, err
	}
	f := fields{m: top}
	if s.ID == "" {
		s.ID = f.strictStr("funding_source_id", "source_id", "id")
	}
	if s.StatusText == "" {
		s.StatusText = f.strictStr("status")
		s.Status = ParseStatus(s.StatusText)
	}
	if s.UserID == "" {
		s.UserID = f.str("user_id", "customer_id")
	}
	if s.Bank == "" {
		s.Bank = f.str("bank_name", "bank")
	}
	if s.Last4 == "" {
		s.Last4 = last4(f.str("last_four", "lbacc", "last4"))
	}
	return s, f.err
}

// sourceFrom reads one funding source object.
func sourceFrom(m object) (FundingSource, error) {
	f := fields{m: m}
	s := FundingSource{
		ID:         f.strictStr("source_id", "funding_source_id", "id"),
		UserID:     f.str("user_id", "customer_id"),
		StatusText: f.strictStr("status"),
		Routing:    f.str("routing", "routing_number"),
		Bank:       f.str("bank", "bank_name"),
		Last4:      last4(f.str("lbacc", "last_four", "last4")),
		Type:       strings.ToLower(f.str("type", "account_type")),
		Nickname:   f.str("nickname"),
		Created:    dateOf(f.str("created_at", "created")),
	}
	s.Primary = f.boolean("is_primary", "primary")
	if s.UserID == "" {
		if u := nested(m, "user", "customer"); u != nil {
			s.UserID = (&fields{m: u}).str("user_id", "customer_id", "id")
		}
	}
	if f.err != nil {
		return FundingSource{}, f.err
	}
	s.Status = ParseStatus(s.StatusText)
	return s, nil
}
