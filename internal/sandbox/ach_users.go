package sandbox

import (
	"net/http"
	"strings"
)

// Default and largest page size of the customer list, as the eCheck
// API's lists (spec §8).
const (
	defaultUserLimit = 15
	maxUserLimit     = 100
	maxUserPage      = 1 << 31
)

// userInput is a validated customer create.
type userInput struct {
	first, last, email, phone string
}

// readUserInput validates POST /user: firstName, lastName, email
// required (≤128, ≤128, ≤80 with an "@"), phone ≤20.
func readUserInput(p params) (userInput, *apiError) {
	f := &fields{p: p}
	in := userInput{
		first: f.text("firstName", true, maxCustomerName),
		last:  f.text("lastName", true, maxCustomerName),
	}
	in.email = f.email("email", maxEmail)
	if in.email == "" && f.err == nil {
		f.fail("email", "required")
	}
	in.phone = f.text("phone", false, maxPhone)
	return in, f.failed()
}

// userAnswer answers a customer create or get.
type userAnswer struct {
	achOK
	UserID string   `json:"user_id,omitempty"`
	User   userView `json:"user"`
}

// duplicateEmail is the 400 for a second customer with an e-mail the key
// already uses; it names the existing customer so that a client that lost
// the first answer can carry on with it.
type duplicateEmail struct {
	achError
	UserID string `json:"user_id"`
}

// createUser serves POST /ach/v2/user. E-mail addresses are unique per
// key, compared without case (docs/ach-wire.md). With DropRate the
// customer is stored and the answer lost.
func (s *Server) createUser(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	p, aerr := s.achRead(w, r)
	if aerr != nil {
		return aerr
	}
	in, aerr := readUserInput(p)
	if aerr != nil {
		return aerr
	}
	now := s.keyNow(ks)
	a := s.ach
	a.mu.Lock()
	if old := ks.ach.byEmail[strings.ToLower(in.email)]; old != nil {
		a.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, duplicateEmail{
			achError{Error: true, Message: "A customer with this email already exists"}, old.id})
		return nil
	}
	c := &customer{id: a.newID(), owner: ks, first: in.first, last: in.last, email: in.email, tel: in.phone, created: now}
	a.customers[c.id] = c
	ks.ach.customers = append(ks.ach.customers, c)
	if ks.ach.byEmail == nil {
		ks.ach.byEmail = make(map[string]*customer)
	}
	ks.ach.byEmail[strings.ToLower(in.email)] = c
	ans := userAnswer{succeeded(), c.id, s.viewUser(c, false)}
	a.mu.Unlock()
	s.answerCreate(w, ans)
	return nil
}

// answerCreate answers an ACH create whose effect is stored, and counts
// it; the route, being lossy, may still lose the answer.
func (s *Server) answerCreate(w http.ResponseWriter, ans any) {
	s.stats.achCreates.Add(1)
	writeJSON(w, http.StatusOK, ans)
}

// getUserPath serves GET /ach/v2/user/:{id} (the colon optional).
func (s *Server) getUserPath(w http.ResponseWriter, _ *http.Request, ks *keyState, id string) *apiError {
	a := s.ach
	a.mu.Lock()
	c, aerr := a.customerOf(ks, id)
	var v userView
	if c != nil {
		v = s.viewUser(c, false)
	}
	a.mu.Unlock()
	if aerr != nil {
		return aerr
	}
	writeJSON(w, http.StatusOK, userAnswer{achOK: succeeded(), User: v})
	return nil
}

// userPage is the customer list's envelope; its numbers are JSON numbers.
type userPage struct {
	CurrentPage int64      `json:"current_page"`
	LastPage    int64      `json:"last_page"`
	PerPage     int64      `json:"per_page"`
	Total       int64      `json:"total"`
	Data        []userView `json:"data"`
}

// listUsers serves GET /ach/v2/user?page=P&limit=L: the key's customers,
// oldest first. A page past the last is empty; last_page is at least 1.
func (s *Server) listUsers(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	f := queryFields(r)
	page, ok := f.integer("page", 1, maxUserPage)
	if !ok {
		page = 1
	}
	limit, ok := f.integer("limit", 1, maxUserLimit)
	if !ok {
		limit = defaultUserLimit
	}
	if aerr := f.failed(); aerr != nil {
		return aerr
	}
	a := s.ach
	a.mu.Lock()
	all := ks.ach.customers
	total := int64(len(all))
	out := userPage{CurrentPage: page, LastPage: max(1, (total+limit-1)/limit), PerPage: limit, Total: total, Data: []userView{}}
	for i := (page - 1) * limit; i < total && i < page*limit; i++ {
		out.Data = append(out.Data, s.viewUser(all[i], true))
	}
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, struct {
		achOK
		List userPage `json:"list"`
	}{succeeded(), out})
	return nil
}
