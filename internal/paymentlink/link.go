// Package paymentlink is the payment-link kind of file, whole: a
// payment-link file asks payers to pay (money coming in), each line
// becoming one link at the service (spec §2.2, POST /v1/paymentlink/create),
// a hosted page where the payer completes a check. The package holds the
// kind's every part: the link and its service (link.go, service.go), the
// ledger's record of each line (store.go), the one rule that creates a
// link exactly once (create.go), the file's lines and results report as
// ingest applies them (file.go), and the checks paid through links as
// reconcile reports them (reconcile.go). Kind (kind.go) is what batchd
// registers (jobs.LineKinds); the registry row is payment.KindLinks.
//
// A link carries no label or number, so batchd makes each one findable:
// it appends a short reference of its own to the memo (Ref), which the
// link list's search finds after a lost answer.
package paymentlink

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// Request is what a link is created with (spec §2.2; all optional): the
// client's one declaration of the fields.
type Request = echeck.PaymentLinkRequest

// Link is a link as the service shows it.
type Link struct {
	Token  string // checkout_token
	URL    string
	Amount money.Cents
	Memo   string
	Status string // "active", "inactive" where the service says
}

// Page is one page of the payment-link list.
type Page struct {
	Links          []Link
	Page, LastPage int // LastPage 0: not given; a page with no links ends the list
}

// MemoMax is the longest memo a link may carry (spec §2.2).
const MemoMax = 128

// Ref is batchd's reference for the link of line of the file whose
// content hash is sha: short, unique to the line, and what the link list
// is searched by.
func Ref(sha string, line int) string {
	return "bd" + sha[:min(len(sha), 10)] + "-" + strconv.Itoa(line)
}

// Memo is the memo a link is created with: the file's memo, cut so that
// " [ref]" fits within MemoMax, then the reference.
func Memo(memo, ref string) string {
	suffix := " [" + ref + "]"
	if memo == "" {
		return strings.TrimSpace(suffix)
	}
	r := []rune(memo)
	if max := MemoMax - len([]rune(suffix)); len(r) > max {
		r = r[:max]
	}
	return string(r) + suffix
}

// IsLinkOf reports whether l is the link batchd created for a line with
// reference ref and amount: the one rule that says "this link is this
// line's". The service may change a memo's case or spacing; the
// reference is compared without case.
func IsLinkOf(l Link, ref string, amount money.Cents) bool {
	return strings.Contains(strings.ToLower(l.Memo), strings.ToLower("["+ref+"]")) && l.Amount == amount
}

// Find looks for the link of a line with reference ref and amount in the
// service's link list: by the list's search, and, where the service
// refuses the search, by walking the whole list. It returns the link, or
// nil when the list was read to its end without it: proof that the link
// does not exist. An error (the list could not be read to the end) proves
// nothing: the line stays in doubt.
func Find(ctx context.Context, svc Service, ref string, amount money.Cents) (*Link, error) {
	l, err := walk(ctx, svc, ref, ref, amount)
	if err != nil && payment.FailureOf(err) == payment.FailRefused {
		return walk(ctx, svc, "", ref, amount)
	}
	return l, err
}

// walkMaxPages bounds a walk of the list, so that a service that never
// ends its list cannot hold a line forever.
const walkMaxPages = 10000

func walk(ctx context.Context, svc Service, search, ref string, amount money.Cents) (*Link, error) {
	for page := 1; page <= walkMaxPages; page++ {
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
