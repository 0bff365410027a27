package sandbox

import (
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// maxCheckNumber is the largest check number (10 digits).
const maxCheckNumber = 9_999_999_999

// createCheck serves POST /v1/check/create. The check is stored in_process
// whatever its verification results; with DropRate the answer may then be
// lost on purpose (the route is lossy).
func (s *Server) createCheck(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	in, aerr := s.readCheckRequest(w, r, ks, false)
	if aerr != nil {
		return aerr
	}
	v, aerr := s.storeCheck(ks, in, "")
	if aerr != nil {
		return aerr
	}
	s.stats.creates.Add(1)
	writeJSON(w, http.StatusOK, checkEnvelope{ok("Check created"), v})
	return nil
}

// readCheckRequest reads and validates the body of a create or an edit,
// refuses fund confirmation to a key without its plan, and brings the
// input to the form the sandbox stores (quirks).
func (s *Server) readCheckRequest(w http.ResponseWriter, r *http.Request, ks *keyState, edit bool) (checkInput, *apiError) {
	p, aerr := readBody(w, r, s.opts.MaxBodyBytes)
	if aerr != nil {
		return checkInput{}, aerr
	}
	in, aerr := readCheckInput(p, edit, s.keyNow(ks))
	if aerr != nil {
		return checkInput{}, aerr
	}
	if in.Fund && !ks.key.FundConfirmation {
		return checkInput{}, errorf(http.StatusForbidden, "Fund Confirmation Limit Reached")
	}
	s.storeInput(&in)
	return in, nil
}

// storeCheck adds the check of in (its token resolved) at the key's clock,
// made through the payment link linkID when not "", emits check.created
// and returns the check as answers show it. Creates and payments through
// a link both make checks this way.
func (s *Server) storeCheck(ks *keyState, in checkInput, linkID string) (checkView, *apiError) {
	now := s.lockSettled(ks)
	defer ks.mu.Unlock()
	if aerr := ks.resolveToken(&in); aerr != nil {
		return checkView{}, aerr
	}
	c := ks.addCheck(in, now)
	c.linkID = linkID
	s.emitCheck(ks, eventCheckCreated, c, now)
	return s.render(c), nil
}

// addCheck stores a new check created at now. Creation times never go
// back within a key (a real clock stepping back is clamped), which keeps
// ks.checks sorted by date and due time.
func (ks *keyState) addCheck(in checkInput, now time.Time) *check {
	created := now
	if created.Before(ks.lastDate) {
		created = ks.lastDate
	}
	ks.lastDate = created
	ks.seq++
	if in.Number == "" {
		in.Number = ks.autoNumber()
	} else {
		ks.noteNumber(in.Number)
	}
	if in.AuthDate == "" {
		in.AuthDate = created.Format(dateLayout)
	}
	id := uuid.NewString()
	for ks.byID[id] != nil {
		id = uuid.NewString()
	}
	c := &check{
		seq: ks.seq, id: id, created: created, due: dueAt(created), status: statusInProcess,
		in: in, verdict: lookupVerdict(in.Routing, in.Account), verify: in.Verify, fund: in.Fund,
	}
	ks.checks = append(ks.checks, c)
	ks.byID[id] = c
	if in.Label != "" {
		ks.byLabel[in.Label] = append(ks.byLabel[in.Label], c)
	}
	return c
}

// autoNumber assigns the next check number of the key.
func (ks *keyState) autoNumber() string {
	n := ks.nextNumber
	ks.nextNumber++
	if ks.nextNumber > maxCheckNumber {
		ks.nextNumber = firstAutoNumber
	}
	return strconv.FormatInt(n, 10)
}

// noteNumber moves the automatic sequence past a number the client chose,
// so that automatic numbers do not repeat chosen ones.
func (ks *keyState) noteNumber(number string) {
	n, err := strconv.ParseInt(number, 10, 64)
	if err == nil && n >= ks.nextNumber && n < maxCheckNumber {
		ks.nextNumber = n + 1
	}
}

// resolveToken replaces a token by the account it stands for.
func (ks *keyState) resolveToken(in *checkInput) *apiError {
	if in.Token == "" {
		return nil
	}
	te, ok := ks.tokens[in.Token]
	if !ok {
		return errorf(http.StatusPaymentRequired, "token: no tokenized account with this token")
	}
	if te.store != in.Store {
		return errorf(http.StatusPaymentRequired, "store: does not match the store of the token")
	}
	in.Routing, in.Account = te.routing, te.account
	return nil
}

// checkID validates a check_id taken from a path.
func checkID(id string) *apiError {
	if len(id) != idLen {
		return badField("check_id", "must be exactly %d characters", idLen)
	}
	return nil
}

// getCheck serves GET /v1/check/{check_id}.
func (s *Server) getCheck(w http.ResponseWriter, _ *http.Request, ks *keyState, id string) *apiError {
	if aerr := checkID(id); aerr != nil {
		return aerr
	}
	s.lockSettled(ks)
	c := ks.byID[id]
	var v checkView
	if c != nil {
		v = s.render(c)
	}
	ks.mu.Unlock()
	if c == nil {
		return errorf(http.StatusNotFound, "Check not found")
	}
	writeJSON(w, http.StatusOK, checkEnvelope{ok("Check found"), v})
	return nil
}

// editCheck serves POST /v1/check/edit: it replaces the check's fields by
// the request's (optional fields left out are cleared, except phone in
// quirks mode), while the check is in_process.
func (s *Server) editCheck(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	in, aerr := s.readCheckRequest(w, r, ks, true)
	if aerr != nil {
		return aerr
	}
	now := s.lockSettled(ks)
	defer ks.mu.Unlock()
	c := ks.byID[in.CheckID]
	if c == nil {
		return errorf(http.StatusNotFound, "Check not found")
	}
	if c.status != statusInProcess {
		return errorf(http.StatusPaymentRequired, "Check is %s; only checks in_process can be edited", c.status)
	}
	if aerr := ks.resolveToken(&in); aerr != nil {
		return aerr
	}
	if s.opts.Quirks {
		quirkKeepPhone(&in, c)
	}
	ks.noteNumber(in.Number)
	if in.AuthDate == "" {
		in.AuthDate = c.created.Format(dateLayout)
	}
	if in.Label != c.in.Label {
		ks.unindexLabel(c)
		ks.indexLabel(c, in.Label)
	}
	c.in = in
	c.verdict = lookupVerdict(in.Routing, in.Account)
	c.verify = c.verify || in.Verify
	c.fund = c.fund || in.Fund
	s.emitCheck(ks, eventCheckChanged, c, now)
	writeJSON(w, http.StatusOK, checkEnvelope{ok("Check updated"), s.render(c)})
	return nil
}

// unindexLabel removes c from its label's index.
func (ks *keyState) unindexLabel(c *check) {
	l := c.in.Label
	if l == "" {
		return
	}
	cs := ks.byLabel[l]
	i := sort.Search(len(cs), func(i int) bool { return cs[i].seq >= c.seq })
	if i < len(cs) && cs[i] == c {
		cs = append(cs[:i], cs[i+1:]...)
	}
	if len(cs) == 0 {
		delete(ks.byLabel, l)
	} else {
		ks.byLabel[l] = cs
	}
}

// indexLabel adds c to label's index at its creation position.
func (ks *keyState) indexLabel(c *check, label string) {
	if label == "" {
		return
	}
	cs := ks.byLabel[label]
	i := sort.Search(len(cs), func(i int) bool { return cs[i].seq > c.seq })
	cs = append(cs, nil)
	copy(cs[i+1:], cs[i:])
	cs[i] = c
	ks.byLabel[label] = cs
}

// deleteCheck serves DELETE /v1/check/{check_id}: an in_process check
// becomes void, and check.deleted is emitted with it.
func (s *Server) deleteCheck(w http.ResponseWriter, r *http.Request, ks *keyState, id string) *apiError {
	if aerr := requireContentType(r); aerr != nil {
		return aerr
	}
	if aerr := checkID(id); aerr != nil {
		return aerr
	}
	now := s.lockSettled(ks)
	defer ks.mu.Unlock()
	c := ks.byID[id]
	if c == nil {
		return errorf(http.StatusNotFound, "Check not found")
	}
	if c.status != statusInProcess {
		return errorf(http.StatusPaymentRequired, "Check is %s; only checks in_process can be voided", c.status)
	}
	c.status = statusVoid
	s.emitCheck(ks, eventCheckDeleted, c, now)
	writeJSON(w, http.StatusOK, struct {
		Success bool `json:"success"`
	}{true})
	return nil
}
