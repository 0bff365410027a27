package payment

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/money"
)

// Payment links. A payment-link file asks payers to pay (money coming
// in): each line becomes one link at the service (spec §2.2,
// POST /v1/paymentlink/create), a hosted page where the payer completes a
// check. A link carries no label or number, so batchd makes each one
// findable: it appends a short reference of its own to the memo
// (LinkRef), which the link list's search finds after a lost answer.

// LinkRequest is what a link is created with (spec §2.2; all optional).
type LinkRequest struct {
	Amount                money.Cents `json:"amount,omitempty"`
	Memo                  string      `json:"memo,omitempty"` // as sent: the file's memo and batchd's reference
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

// PaymentLink is a link as the service shows it.
type PaymentLink struct {
	Token  string // checkout_token
	URL    string
	Amount money.Cents
	Memo   string
	Status string // "active", "inactive" where the service says
}

// LinkPage is one page of the payment-link list.
type LinkPage struct {
	Links          []PaymentLink
	Page, LastPage int // LastPage 0: not given; a page with no links ends the list
}

// LinkService is what the jobs need of the service's payment links.
// Errors are classified as Service's are (FailureOf).
type LinkService interface {
	CreateLink(ctx context.Context, r LinkRequest) (*PaymentLink, error)
	// ListLinks returns one page (from 1) of the link list, searched by
	// search when it is not "". The service's search matches memos,
	// amounts or dates loosely, so a caller compares what it finds; a
	// service that refuses the search answers FailRefused.
	ListLinks(ctx context.Context, search string, page int) (*LinkPage, error)
	// CancelLink deactivates the link with checkout token token, so that
	// no payer can pay through it; doing it again changes nothing. An
	// unknown token is an error that Is ErrNotFound.
	CancelLink(ctx context.Context, token string) error
}

// LinkMemoMax is the longest memo a link may carry (spec §2.2).
const LinkMemoMax = 128

// LinkRef is batchd's reference for the link of line of the file whose
// content hash is sha: short, unique to the line, and what the link list
// is searched by.
func LinkRef(sha string, line int) string {
	return "bd" + sha[:min(len(sha), 10)] + "-" + strconv.Itoa(line)
}

// LinkMemo is the memo a link is created with: the file's memo, cut so
// that " [ref]" fits within LinkMemoMax, then the reference.
func LinkMemo(memo, ref string) string {
	suffix := " [" + ref + "]"
	if memo == "" {
		return strings.TrimSpace(suffix)
	}
	r := []rune(memo)
	if max := LinkMemoMax - len([]rune(suffix)); len(r) > max {
		r = r[:max]
	}
	return string(r) + suffix
}

// IsLinkOf reports whether l is the link batchd created for a line with
// reference ref and amount: the one rule that says "this link is this
// line's". The service may change a memo's case or spacing; the
// reference is compared without case.
func IsLinkOf(l PaymentLink, ref string, amount money.Cents) bool {
	return strings.Contains(strings.ToLower(l.Memo), strings.ToLower("["+ref+"]")) && l.Amount == amount
}

// LinkOutcome is what became of one link line. LinkSent is the intent:
// the create may have left, nothing is known of its answer.
type LinkOutcome string

const (
	LinkSent    LinkOutcome = "sent"
	LinkCreated LinkOutcome = "created"
	LinkRefused LinkOutcome = "refused"
)

// Settled reports whether o is final: created or refused.
func (o LinkOutcome) Settled() bool { return o == LinkCreated || o == LinkRefused }

// Link is the ledger's record of one link line.
type Link struct {
	Key     LineKey     `json:"key"`
	Ref     string      `json:"ref"`
	Request LinkRequest `json:"request"`
	// Kept by batchd, never sent.
	Invoice    string `json:"invoice,omitempty"`
	PayerEmail string `json:"payer_email,omitempty"`
	PayerName  string `json:"payer_name,omitempty"`

	Outcome LinkOutcome `json:"outcome"`
	Token   string      `json:"token,omitempty"`
	URL     string      `json:"url,omitempty"`
	Note    string      `json:"note,omitempty"`
	Sent    time.Time   `json:"sent"`
	Settled time.Time   `json:"settled,omitzero"`
}

// LinkLedger keeps link lines' intents and outcomes.
type LinkLedger interface {
	// LinkIntent records l as sent unless its line has a record, which
	// it returns with fresh false.
	LinkIntent(l Link) (rec Link, fresh bool, err error)
	// LinkSettled records what became of a line: created (with link) or
	// refused. A line settled keeps its first outcome.
	LinkSettled(k LineKey, outcome LinkOutcome, link *PaymentLink, note string) (Link, error)
	// Links lists the recorded lines of one file (every file's for ""),
	// by file and line.
	Links(file string) ([]Link, error)
}

// FindLink looks for the link of a line with reference ref and amount in
// the service's link list: by the list's search, and, where the service
// refuses the search, by walking the whole list. It returns the link, or
// nil when the list was read to its end without it: proof that the link
// does not exist. An error (the list could not be read to the end) proves
// nothing: the line stays in doubt.
func FindLink(ctx context.Context, svc LinkService, ref string, amount money.Cents) (*PaymentLink, error) {
	l, err := walkLinks(ctx, svc, ref, ref, amount)
	if err != nil && FailureOf(err) == FailRefused {
		return walkLinks(ctx, svc, "", ref, amount)
	}
	return l, err
}

// walkLinksMaxPages bounds a walk of the list, so that a service that
// never ends its list cannot hold a line forever.
const walkLinksMaxPages = 10000

func walkLinks(ctx context.Context, svc LinkService, search, ref string, amount money.Cents) (*PaymentLink, error) {
	for page := 1; page <= walkLinksMaxPages; page++ {
		pg, err := svc.ListLinks(ctx, search, page)
		if err != nil {
			return nil, err
		}
		for i := range pg.Links {
			if IsLinkOf(pg.Links[i], ref, amount) {
				return &pg.Links[i], nil
			}
		}
		if len(pg.Links) == 0 || pg.LastPage != 0 && page >= pg.LastPage {
			return nil, nil
		}
	}
	return nil, errors.New("the payment-link list did not end")
}
