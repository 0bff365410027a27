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

// IsLinkOf reports whether l is the link batchd created for line rec: the
// one rule that says "this link is this line's". It carries the line's
// amount and the line's reference in its memo; for a line sent without
// the reference (memo_reference off), the line's memo itself. The
// service may change a memo's case or spacing: memos and references are
// compared without either.
func IsLinkOf(l Link, rec Line) bool {
	if l.Amount != rec.Request.Amount {
		return false
	}
	if rec.NoRef {
		return sameMemo(l.Memo, rec.Request.Memo)
	}
	return strings.Contains(strings.ToLower(l.Memo), strings.ToLower("["+rec.Ref+"]"))
}

// sameMemo compares memos as the service may give them back.
func sameMemo(a, b string) bool {
	return strings.EqualFold(strings.Join(strings.Fields(a), " "), strings.Join(strings.Fields(b), " "))
}

// Find looks for the link of line rec in the service's link list: by the
// list's search (for the reference, or the memo of a line without one),
// and, where the service refuses the search, by walking the whole list.
// It returns the link, or nil when the list was read to its end without
// it: proof that the link does not exist. An error (the list could not
// be read to the end) proves nothing: the line stays in doubt.
func Find(ctx context.Context, svc Service, rec Line) (*Link, error) {
	search := rec.Ref
	if rec.NoRef {
		search = rec.Request.Memo
	}
	l, err := walk(ctx, svc, search, rec)
	if err != nil && payment.FailureOf(err) == payment.FailRefused {
		return walk(ctx, svc, "", rec)
	}
	return l, err
}

// walkMaxPages bounds a walk of the list, so that a service that never
// ends its list cannot hold a line forever.
const walkMaxPages = 10000

func walk(ctx context.Context, svc Service, search string, rec Line) (*Link, error) {
	for page := 1; page <= walkMaxPages; page++ {
		pg, err := svc.ListLinks(ctx, search, page)
		if err != nil {
			return nil, err
		}
		for i := range pg.Links {
			if IsLinkOf(pg.Links[i], rec) {
				return &pg.Links[i], nil
			}
		}
		if len(pg.Links) == 0 || pg.LastPage != 0 && page >= pg.LastPage {
			return nil, nil
		}
	}
	return nil, errors.New("the payment-link list did not end")
}
