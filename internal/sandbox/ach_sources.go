package sandbox

import (
	"net/http"
	"time"
)

// Account types of a funding source.
const (
	typeChecking = "checking"
	typeSavings  = "savings"
)

// sourceInput is a validated request to link a bank account.
type sourceInput struct {
	userID, routing, account, kind, nickname string
}

// readSourceInput validates the body of POST /funding-source and of the
// on-demand create; account_type is required only by the former
// (typeRequired), the latter defaults it to checking.
func readSourceInput(p params, typeRequired bool) (sourceInput, *apiError) {
	f := &fields{p: p}
	in := sourceInput{userID: f.text("user_id", true, maxACHID)}
	in.routing, in.account = f.bankAccount()
	in.kind = f.enum("account_type", typeChecking, typeSavings)
	if in.kind == "" && f.err == nil {
		if typeRequired {
			f.fail("account_type", "required")
		}
		in.kind = typeChecking
	}
	in.nickname = f.text("nickname", false, maxNickname)
	return in, f.failed()
}

// link adds a funding source with status to the customer of in, under
// a.mu, after the rules of docs/ach-wire.md in this order: the customer
// (404s), the account's one customer (400s), the source limit (400). A
// new source is primary when the customer has no primary (decided), or
// always when primary is set (processor tokens), replacing the old one.
// It emits funding-source.added, then funding-source.made-primary when
// the source became primary.
func (s *Server) link(ks *keyState, in sourceInput, status string, primary bool, now time.Time) (*fundingSource, *apiError) {
	a := s.ach
	c, aerr := a.customerOf(ks, in.userID)
	if aerr != nil {
		return nil, aerr
	}
	if held := a.accounts[bankKey(in.routing, in.account)]; held != nil {
		if held.cust == c {
			return nil, errorf(http.StatusBadRequest, "This bank account is already linked to this customer")
		}
		return nil, errorf(http.StatusBadRequest, "This bank account is associated with another user")
	}
	if c.live() >= s.opts.MaxFundingSources {
		return nil, errorf(http.StatusBadRequest, "You exceeded the maximum number of bank accounts")
	}
	src := &fundingSource{
		id: a.newID(), cust: c, routing: in.routing, account: in.account,
		kind: in.kind, nickname: in.nickname, status: status, created: now,
	}
	primary = primary || !c.hasPrimary()
	c.sources = append(c.sources, src)
	if primary {
		c.makePrimary(src)
	}
	a.sources[src.id] = src
	a.accounts[bankKey(in.routing, in.account)] = src
	s.emitSource(src, eventSourceAdded)
	if primary {
		s.emitSource(src, eventSourceMadePrimary)
	}
	return src, nil
}

// createAnswer answers POST /funding-source.
type createAnswer struct {
	achOK
	FundingSourceID string     `json:"funding_source_id"`
	Status          string     `json:"status"`
	FundingSource   sourceView `json:"funding_source"`
}

// createSource serves POST /ach/v2/funding-source: a Pending source, to
// be verified by micro-deposits.
func (s *Server) createSource(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	return s.linkFromBody(w, r, ks, true, func(sourceInput) string { return srcPending }, func(src *fundingSource) any {
		return createAnswer{succeeded(), src.id, s.srcStatus(src.status), s.viewSource(src, false)}
	})
}

// linkFromBody serves the two creates that link the account of the body
// (readSourceInput): the new source gets the status statusOf gives, and
// the answer answerOf makes of it, built under a.mu.
func (s *Server) linkFromBody(w http.ResponseWriter, r *http.Request, ks *keyState, typeRequired bool,
	statusOf func(sourceInput) string, answerOf func(*fundingSource) any) *apiError {
	p, aerr := s.achRead(w, r)
	if aerr != nil {
		return aerr
	}
	in, aerr := readSourceInput(p, typeRequired)
	if aerr != nil {
		return aerr
	}
	s.ach.mu.Lock()
	src, aerr := s.link(ks, in, statusOf(in), false, s.keyNow(ks))
	var ans any
	if src != nil {
		ans = answerOf(src)
	}
	s.ach.mu.Unlock()
	if aerr != nil {
		return aerr
	}
	s.answerCreate(w, ans)
	return nil
}

// onDemandAnswer answers POST /on-demand/funding-source (spec §4.2).
type onDemandAnswer struct {
	achOK
	FundingSourceID string     `json:"funding_source_id"`
	Status          string     `json:"status"`
	BankName        string     `json:"bank_name"`
	LastFour        string     `json:"last_four"`
	FundingSource   sourceView `json:"funding_source"`
}

// onDemandStatus is the decided rule the specification leaves "not
// shown": an account of the sandbox fixture table is "enabled for
// third-party verification" and Verified; any other is Unverified.
func onDemandStatus(routing, account string) string {
	if _, ok := fixtureOrdinal(account); ok && routing == FixtureRouting {
		return srcVerified
	}
	return srcUnverified
}

// createOnDemand serves POST /ach/v2/on-demand/funding-source.
func (s *Server) createOnDemand(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	statusOf := func(in sourceInput) string { return onDemandStatus(in.routing, in.account) }
	return s.linkFromBody(w, r, ks, false, statusOf, func(src *fundingSource) any {
		v := s.viewSource(src, false)
		return onDemandAnswer{succeeded(), src.id, v.Status, v.BankName, v.LastFour, v}
	})
}

// sourceAnswer answers a single funding source.
type sourceAnswer struct {
	achOK
	FundingSource sourceView `json:"funding_source"`
}

// getSource serves GET /ach/v2/funding-source/:{id} (the colon optional).
func (s *Server) getSource(w http.ResponseWriter, _ *http.Request, ks *keyState, id string) *apiError {
	s.ach.mu.Lock()
	src, aerr := s.ach.sourceOf(ks, id)
	var v sourceView
	if src != nil {
		v = s.viewSource(src, false)
	}
	s.ach.mu.Unlock()
	if aerr != nil {
		return aerr
	}
	writeJSON(w, http.StatusOK, sourceAnswer{succeeded(), v})
	return nil
}

// listSources serves GET /ach/v2/funding-source/user/:{user_id}: the
// customer's sources oldest first, deleted ones included.
func (s *Server) listSources(w http.ResponseWriter, _ *http.Request, ks *keyState, userID string) *apiError {
	s.ach.mu.Lock()
	c, aerr := s.ach.customerOf(ks, userID)
	list := []sourceView{}
	if c != nil {
		for _, src := range c.sources {
			list = append(list, s.viewSource(src, true))
		}
	}
	s.ach.mu.Unlock()
	if aerr != nil {
		return aerr
	}
	writeJSON(w, http.StatusOK, struct {
		achOK
		List []sourceView `json:"list"`
	}{succeeded(), list})
	return nil
}

// removeSource serves POST /ach/v2/funding-source/remove {user_id,
// source_id}: the source becomes deleted and its account free. Removing
// a deleted source again succeeds (decided), so that a retry is harmless.
func (s *Server) removeSource(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	f := s.readFields(w, r)
	userID := f.text("user_id", true, maxACHID)
	id := f.sourceID(false)
	if id == "" && f.err == nil {
		f.fail("source_id", "required")
	}
	if aerr := f.failed(); aerr != nil {
		return aerr
	}
	return s.onSource(ks, userID, id, func(src *fundingSource) *apiError {
		s.deleteSource(src)
		writeJSON(w, http.StatusOK, succeeded())
		return nil
	})
}

// deleteSource deletes src and frees its account, under a.mu, emitting
// funding-source.deleted unless it was deleted before: the effect of
// both a source's removal and its account's deletion.
func (s *Server) deleteSource(src *fundingSource) {
	if s.ach.remove(src) {
		s.emitSource(src, eventSourceDeleted)
	}
}

// ownSource resolves a source that must belong to the customer userID of
// ks: the customer's 404s first, then "Funding source not found" for a
// source of anyone else.
func (a *achState) ownSource(ks *keyState, userID, id string) (*fundingSource, *apiError) {
	c, aerr := a.customerOf(ks, userID)
	if aerr != nil {
		return nil, aerr
	}
	src, aerr := a.sourceOf(ks, id)
	if aerr != nil {
		return nil, aerr
	}
	if src.cust != c {
		return nil, errorf(http.StatusNotFound, "Funding source not found")
	}
	return src, nil
}
