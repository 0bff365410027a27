package sandbox

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/batchd/batchd/internal/money"
)

// Payment link status values. DELETE …/changestatus/{token} deactivates.
const (
	linkActive   = "active"
	linkInactive = "inactive"
)

// linkBase is where the sandbox's checkout pages would live. The host is
// reserved (.invalid): the sandbox serves no checkout pages.
const linkBase = "https://checkout.sandbox.invalid/"

// paymentLink is one stored payment link, guarded by its key's mutex.
type paymentLink struct {
	seq     int64
	created time.Time
	status  string
	view    linkView
}

// linkView is the JSON form of a payment link.
type linkView struct {
	CheckoutToken string  `json:"checkout_token"`
	Link          string  `json:"link"`
	Amount        *amount `json:"amount"`
	Memo          string  `json:"memo"`
	ThankYouURL   string  `json:"thank_you_url"`
	ErrorURL      string  `json:"error_url"`
	recurringView
	FundConfirmation  bool   `json:"fund_confirmation"`
	BasicVerification bool   `json:"basic_verification"`
	IsBankauth        bool   `json:"is_bankauth"`
	SignatureRequired bool   `json:"signature_required"`
	SubmitForApproval bool   `json:"submit_for_approval"`
	Status            string `json:"status"`
	CreatedAt         string `json:"created_at"`
}

// linkEnvelope answers payment link create and changestatus.
type linkEnvelope struct {
	okBody
	CheckoutLink linkView `json:"checkout_link"`
}

// readLink validates a payment link create request (spec 2.2): every field
// is optional, but typed and limited.
func readLink(p params) (linkView, *apiError) {
	f := &fields{p: p}
	var v linkView
	if a, ok := f.amount("amount", false); ok {
		v.Amount = &amount{c: a}
	}
	v.Memo = f.text("memo", false, maxMemo)
	v.ThankYouURL = f.webURL("thank_you_url")
	v.ErrorURL = f.webURL("error_url")
	v.recurringView = readRecurring(f)
	v.FundConfirmation = f.boolean("fund_confirmation")
	v.BasicVerification = f.boolean("basic_verification")
	v.IsBankauth = f.boolean("is_bankauth")
	v.SignatureRequired = f.boolean("signature_required")
	v.SubmitForApproval = f.boolean("submit_for_approval")
	if f.err != nil {
		return linkView{}, f.err
	}
	return v, nil
}

// createLink serves POST /v1/paymentlink/create.
func (s *Server) createLink(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	p, aerr := readBody(w, r, s.opts.MaxBodyBytes)
	if aerr != nil {
		return aerr
	}
	v, aerr := readLink(p)
	if aerr != nil {
		return aerr
	}
	ks.mu.Lock()
	now := s.keyNow(ks)
	tok := uuid.NewString()
	for ks.linkByTok[tok] != nil {
		tok = uuid.NewString()
	}
	ks.seq++
	v.CheckoutToken, v.Link, v.Status, v.CreatedAt = tok, linkBase+tok, linkActive, now.Format(timeLayout)
	pl := &paymentLink{seq: ks.seq, created: now, status: linkActive, view: v}
	ks.links = append(ks.links, pl)
	ks.linkByTok[tok] = pl
	ks.mu.Unlock()
	writeJSON(w, http.StatusOK, linkEnvelope{ok("Payment link created"), s.renderLink(v)})
	return nil
}

// changeLinkStatus serves DELETE /v1/paymentlink/changestatus/{token}: the
// link becomes inactive. Repeating it is harmless (200, still inactive).
func (s *Server) changeLinkStatus(w http.ResponseWriter, r *http.Request, ks *keyState, tok string) *apiError {
	if aerr := requireContentType(r); aerr != nil {
		return aerr
	}
	if len(tok) != idLen {
		return badField("checkout_token", "must be exactly %d characters", idLen)
	}
	ks.mu.Lock()
	pl := ks.linkByTok[tok]
	var v linkView
	if pl != nil {
		pl.status = linkInactive
		pl.view.Status = linkInactive
		v = pl.view
	}
	ks.mu.Unlock()
	if pl == nil {
		return errorf(http.StatusNotFound, "Payment link not found")
	}
	writeJSON(w, http.StatusOK, linkEnvelope{ok("Payment link status changed"), s.renderLink(v)})
	return nil
}

// listLinks serves GET /v1/paymentlink/list with the check list's paging
// and envelope. sort is date (default), amount or memo; search (the name
// the sandbox gives the unnamed search parameter) keeps links whose memo
// contains it (case-insensitively), whose amount equals it, or whose
// created_at begins with it. In quirks mode search is refused
// (quirkNoLinkSearch).
func (s *Server) listLinks(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	q, aerr := readQuery(r)
	if aerr != nil {
		return aerr
	}
	// The spec gives the link list the check list's sort values (date,
	// number, name); a link has no number or name, so those two order by
	// creation, like date. amount and memo are extras.
	lq, aerr := readListQuery(q, "date", "number", "name", "amount", "memo")
	if aerr != nil {
		return aerr
	}
	f := &fields{p: q}
	search := f.text("search", false, maxFilter)
	if f.err != nil {
		return f.err
	}
	if search != "" && s.opts.Quirks {
		return quirkNoLinkSearch()
	}
	ks.mu.Lock()
	ls := make([]*paymentLink, 0, len(ks.links))
	for _, l := range ks.links {
		if inRange(l.created, s.localDay(lq.from), s.localDay(lq.to)) && matchesSearch(l, search) {
			ls = append(ls, l)
		}
	}
	sortLinks(ls, lq.sort)
	lp := pageOf(ls, lq, func(l *paymentLink) linkView { return s.renderLink(l.view) })
	ks.mu.Unlock()
	s.writeList(w, "Payment links found", lp, lq.page)
	return nil
}

// inRange reports whether t's day lies in [from, to]; zero bounds are open.
func inRange(t, from, to time.Time) bool {
	return (from.IsZero() || !t.Before(from)) && (to.IsZero() || t.Before(to.AddDate(0, 0, 1)))
}

func matchesSearch(l *paymentLink, search string) bool {
	if search == "" {
		return true
	}
	v := &l.view
	if strings.Contains(strings.ToLower(v.Memo), strings.ToLower(search)) || strings.HasPrefix(v.CreatedAt, search) {
		return true
	}
	a, err := parseAmount(search)
	return err == nil && v.Amount != nil && v.Amount.c == a
}

// sortLinks orders links ascending by the sort key, ties by creation.
func sortLinks(ls []*paymentLink, by string) {
	slices.SortFunc(ls, func(a, b *paymentLink) int {
		var c int
		switch by {
		case "amount":
			c = cmp.Compare(amountOrZero(a.view.Amount), amountOrZero(b.view.Amount))
		case "memo":
			c = strings.Compare(strings.ToLower(a.view.Memo), strings.ToLower(b.view.Memo))
		}
		return cmp.Or(c, cmp.Compare(a.seq, b.seq))
	})
}

func amountOrZero(a *amount) money.Cents {
	if a == nil {
		return 0
	}
	return a.c
}
