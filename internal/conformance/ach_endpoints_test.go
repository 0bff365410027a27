package conformance

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ach"
	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/sandbox"
)

// TestACHCustomers walks the customer endpoints: create, get (with and
// without the colon), list with paging oldest first, and the decided
// per-key, case-insensitive e-mail uniqueness whose 400 names the
// existing customer.
func TestACHCustomers(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{})
		c := e.achClient(keyA)
		ctx := t.Context()
		req := ach.UserRequest{FirstName: "Grace", LastName: "Hopper", Email: "Grace@Example.com", Phone: "+1 555 0100"}
		u, err := c.CreateUser(ctx, req)
		if err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		want := ach.User{ID: u.ID, FirstName: "Grace", LastName: "Hopper", Email: "Grace@Example.com", Phone: "+1 555 0100",
			Created: startTime()}
		if !uuidRE.MatchString(u.ID) || u.FirstName != want.FirstName || u.LastName != want.LastName ||
			u.Email != want.Email || u.Phone != want.Phone || !u.Created.Equal(want.Created) || len(u.Sources) != 0 {
			t.Errorf("created %+v, want %+v", u, want)
		}

		t.Run("get", func(t *testing.T) {
			got, err := c.GetUser(ctx, u.ID)
			if err != nil {
				t.Fatalf("GetUser: %v", err)
			}
			if got.ID != u.ID || got.Email != u.Email || !got.Created.Equal(u.Created) {
				t.Errorf("get %+v, created %+v", got, u)
			}
			// The client sends /user/:{id}; the contract accepts /user/{id} too.
			r := e.achRaw(http.MethodGet, "/user/"+u.ID, keyA, nil)
			if r.status != http.StatusOK || r.obj("user")["user_id"] != u.ID || r.json["success"] != true {
				t.Errorf("GET /user/{id} without colon: HTTP %d %s", r.status, r.body)
			}
		})

		t.Run("email unique per key", func(t *testing.T) {
			_, err := c.CreateUser(ctx, ach.UserRequest{FirstName: "G", LastName: "H", Email: "grace@EXAMPLE.com"})
			ae := achErr(t, err, http.StatusBadRequest, apiwire.Permanent, ach.ErrEmailTaken)
			if ach.UserIDOf(ae) != u.ID {
				t.Errorf("duplicate e-mail names customer %q, want %q", ach.UserIDOf(ae), u.ID)
			}
			if _, err := e.achClient(keyB).CreateUser(ctx, req); err != nil {
				t.Errorf("the same e-mail under another key: %v", err)
			}
		})

		t.Run("list", func(t *testing.T) {
			ids := []string{u.ID}
			for range 2 {
				ids = append(ids, newCustomer(t, c).ID)
			}
			p, err := c.ListUsers(ctx, 1, 2)
			if err != nil {
				t.Fatalf("ListUsers: %v", err)
			}
			if p.Paging != (ach.Paging{CurrentPage: 1, LastPage: 2, PerPage: 2, Total: 3}) {
				t.Errorf("page 1 paging %+v", p.Paging)
			}
			p2, err := c.ListUsers(ctx, 2, 2)
			if err != nil {
				t.Fatalf("ListUsers page 2: %v", err)
			}
			var got []string
			for _, x := range append(p.Users, p2.Users...) {
				got = append(got, x.ID)
			}
			if strings.Join(got, ",") != strings.Join(ids, ",") {
				t.Errorf("listed %v, want oldest first %v", got, ids)
			}
			def, err := c.ListUsers(ctx, 0, 0)
			if err != nil || def.PerPage != 15 || def.CurrentPage != 1 || len(def.Users) != 3 {
				t.Errorf("default page: %+v, %v; want 15 per page, page 1, 3 users", def, err)
			}
			other, err := e.achClient(keyB).ListUsers(ctx, 0, 0)
			if err != nil || other.Total != 1 {
				t.Errorf("keyB's list: %+v, %v; want its one customer only", other, err)
			}
			r := e.achRaw(http.MethodGet, "/user?limit=101", keyA, nil)
			achRawErr(t, r, http.StatusBadRequest, "")
			if !namesField(r.message(), "limit") {
				t.Errorf("limit 101: message %q does not name limit", r.message())
			}
		})

		t.Run("field rules", func(t *testing.T) {
			for _, tc := range []struct {
				field string
				req   ach.UserRequest
			}{
				{"firstName", ach.UserRequest{LastName: "L", Email: "x1@example.com"}},
				{"lastName", ach.UserRequest{FirstName: "F", Email: "x2@example.com"}},
				{"email", ach.UserRequest{FirstName: "F", LastName: "L"}},
				{"email", ach.UserRequest{FirstName: "F", LastName: "L", Email: "no-at-sign"}},
				{"firstName", ach.UserRequest{FirstName: strings.Repeat("f", 129), LastName: "L", Email: "x3@example.com"}},
				{"phone", ach.UserRequest{FirstName: "F", LastName: "L", Email: "x4@example.com", Phone: strings.Repeat("5", 21)}},
			} {
				_, err := c.CreateUser(ctx, tc.req)
				ae := achErr(t, err, http.StatusBadRequest, apiwire.Permanent)
				if !namesField(ae.Message, tc.field) {
					t.Errorf("%+v: message %q does not name %s", tc.req, ae.Message, tc.field)
				}
			}
			if _, err := c.CreateUser(ctx, ach.UserRequest{FirstName: strings.Repeat("f", 128), LastName: "L",
				Email: strings.Repeat("e", 68) + "@example.com", Phone: strings.Repeat("5", 20)}); err != nil {
				t.Errorf("every field at its limit: %v", err)
			}
		})

		t.Run("form-encoded", func(t *testing.T) {
			r := e.send(http.MethodPost, achPrefix+"/user", keyA,
				strings.NewReader("firstName=Form&lastName=Encoded&email=form%40example.com"), "application/x-www-form-urlencoded")
			if r.status != http.StatusOK || r.obj("user")["email"] != "form@example.com" {
				t.Errorf("form-encoded create: HTTP %d %s", r.status, r.body)
			}
		})
	})
}

// TestACHFundingSourceEndpoints walks a funding source through create,
// get, list (the customer's and the customer object's), remove, and the
// on-demand create.
func TestACHFundingSourceEndpoints(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{})
		c := e.achClient(keyA)
		ctx := t.Context()
		u := newCustomer(t, c)
		acct := freshAccount()
		req := sourceReq(u.ID, acct)
		req.Type, req.Nickname = ach.Savings, "rainy day"
		s, err := c.CreateFundingSource(ctx, req)
		if err != nil {
			t.Fatalf("CreateFundingSource: %v", err)
		}
		if !uuidRE.MatchString(s.ID) || s.UserID != u.ID || s.Status != ach.StatusPending || s.StatusText != e.statusWord("Pending") ||
			s.Routing != fixtureRouting || s.Last4 != acct[len(acct)-4:] || s.Type != ach.Savings || s.Nickname != "rainy day" ||
			s.Bank == "" || !s.Created.Equal(day(t, "2026-03-04")) {
			t.Errorf("created source %+v", s)
		}

		t.Run("get", func(t *testing.T) {
			got, err := c.GetFundingSource(ctx, s.ID)
			if err != nil {
				t.Fatalf("GetFundingSource: %v", err)
			}
			if *got != *s {
				t.Errorf("get\n %+v\nwant %+v", got, s)
			}
			r := e.achRaw(http.MethodGet, "/funding-source/"+s.ID, keyA, nil)
			if r.status != http.StatusOK || r.obj("funding_source")["source_id"] != s.ID ||
				r.obj("funding_source")["funding_source_id"] != s.ID {
				t.Errorf("GET /funding-source/{id} without colon: HTTP %d %s", r.status, r.body)
			}
		})

		t.Run("lists", func(t *testing.T) {
			l := listSources(t, c, u.ID)
			if len(l) != 1 || l[0] != *s {
				t.Errorf("list %+v, want [%+v]", l, s)
			}
			got, err := c.GetUser(ctx, u.ID)
			if err != nil {
				t.Fatalf("GetUser: %v", err)
			}
			if len(got.Sources) != 1 || got.Sources[0].ID != s.ID || got.Sources[0].Status != ach.StatusPending {
				t.Errorf("customer's sources %+v", got.Sources)
			}
			p, err := c.ListUsers(ctx, 0, 0)
			if err != nil || len(p.Users) != 1 || len(p.Users[0].Sources) != 1 || p.Users[0].Sources[0].ID != s.ID {
				t.Errorf("customer list's sources: %+v %v", p, err)
			}
			r := e.achRaw(http.MethodGet, "/funding-source/user/"+u.ID, keyA, nil)
			if r.status != http.StatusOK {
				t.Errorf("GET /funding-source/user/{id} without colon: HTTP %d %s", r.status, r.body)
			}
		})

		t.Run("remove", func(t *testing.T) {
			otherAcct := freshAccount()
			other := newPending(t, c, u.ID, otherAcct)
			if a, err := c.AccountAvailable(ctx, fixtureRouting, otherAcct); err != nil || a.Available || a.UserID != u.ID {
				t.Errorf("linked account: %+v %v; want unavailable, held by %s", a, err, u.ID)
			}
			if err := c.RemoveFundingSource(ctx, u.ID, other.ID); err != nil {
				t.Fatalf("RemoveFundingSource: %v", err)
			}
			wantSourceStatus(t, c, other.ID, ach.StatusDeleted)
			l := listSources(t, c, u.ID)
			if len(l) != 2 || l[0].ID != s.ID || l[1].ID != other.ID || l[1].Status != ach.StatusDeleted {
				t.Errorf("list after remove: %+v; want both, oldest first, the removed one deleted", l)
			}
			if a, err := c.AccountAvailable(ctx, fixtureRouting, otherAcct); err != nil || !a.Available || a.UserID != "" {
				t.Errorf("removed account: %+v %v; want available again", a, err)
			}
		})

		t.Run("on demand", func(t *testing.T) {
			od, err := c.CreateOnDemandFundingSource(ctx, ach.FundingSourceRequest{UserID: u.ID, Routing: fixtureRouting, Account: account(16)})
			if err != nil {
				t.Fatalf("CreateOnDemandFundingSource: %v", err)
			}
			if od.Status != ach.StatusVerified || od.Type != ach.Checking || od.Last4 != "0016" || od.Bank == "" || od.UserID != u.ID {
				t.Errorf("on-demand fixture source %+v: want Verified checking ****0016", od)
			}
			r := e.achRaw(http.MethodPost, "/on-demand/funding-source", keyA, map[string]any{
				"user_id": u.ID, "routing_number": fixtureRouting, "account_number": freshAccount(), "account_type": "savings"})
			if r.status != http.StatusOK || r.json["status"] != e.statusWord("Unverified") || r.json["bank_name"] == "" ||
				len(r.json["last_four"].(string)) != 4 || r.json["funding_source_id"] != r.obj("funding_source")["source_id"] {
				t.Errorf("raw on-demand create: HTTP %d %s", r.status, r.body)
			}
		})
	})
}

// TestACHAccounts checks /accounts and /accounts/delete: availability as
// seen by the owner's key and by another key, and a delete that frees
// the account for another customer.
func TestACHAccounts(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{})
		a, b := e.achClient(keyA), e.achClient(keyB)
		ctx := t.Context()
		acct := freshAccount()
		if av, err := a.AccountAvailable(ctx, fixtureRouting, acct); err != nil || !av.Available || av.UserID != "" {
			t.Fatalf("fresh account: %+v %v, want available", av, err)
		}
		u := newCustomer(t, a)
		s := newPending(t, a, u.ID, acct)
		if av, err := a.AccountAvailable(ctx, fixtureRouting, acct); err != nil || av.Available || av.UserID != u.ID {
			t.Errorf("owner's view: %+v %v, want unavailable held by %s", av, err, u.ID)
		}
		if av, err := b.AccountAvailable(ctx, fixtureRouting, acct); err != nil || av.Available || av.UserID != "" {
			t.Errorf("another key's view: %+v %v, want unavailable without the owner", av, err)
		}
		err := b.DeleteAccount(ctx, fixtureRouting, acct)
		achErr(t, err, http.StatusNotFound, apiwire.Permanent, ach.ErrNotFound)
		if err := a.DeleteAccount(ctx, fixtureRouting, acct); err != nil {
			t.Fatalf("DeleteAccount: %v", err)
		}
		wantSourceStatus(t, a, s.ID, ach.StatusDeleted)
		if av, err := b.AccountAvailable(ctx, fixtureRouting, acct); err != nil || !av.Available {
			t.Errorf("deleted account: %+v %v, want available", av, err)
		}
		err = a.DeleteAccount(ctx, fixtureRouting, acct)
		achErr(t, err, http.StatusNotFound, apiwire.Permanent, ach.ErrNotFound)
		if _, err := b.CreateFundingSource(ctx, sourceReq(newCustomer(t, b).ID, acct)); err != nil {
			t.Errorf("freed account linked by another key's customer: %v", err)
		}
		r := e.achRaw(http.MethodGet, "/accounts?routing_number=12345&account_number="+acct, keyA, nil)
		achRawErr(t, r, http.StatusBadRequest, "routing_number must be 9 digits")
	})
}

// TestACHTransfers checks direct debits and credits: a debit needs a
// Verified source (402 otherwise), a credit takes an Unverified or
// Verified one, and both answer a check_id.
func TestACHTransfers(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{})
		c := e.achClient(keyA)
		ctx := t.Context()
		u := newCustomer(t, c)
		pending := newPending(t, c, u.ID, freshAccount())
		unverified, err := c.CreateOnDemandFundingSource(ctx, ach.FundingSourceRequest{UserID: u.ID, Routing: fixtureRouting, Account: freshAccount()})
		if err != nil || unverified.Status != ach.StatusUnverified {
			t.Fatalf("on-demand non-fixture source: %+v %v, want Unverified", unverified, err)
		}
		verified, err := c.CreateOnDemandFundingSource(ctx, ach.FundingSourceRequest{UserID: u.ID, Routing: fixtureRouting, Account: account(20)})
		if err != nil || verified.Status != ach.StatusVerified {
			t.Fatalf("on-demand fixture source: %+v %v, want Verified", verified, err)
		}
		tr := func(id string) ach.TransferRequest {
			return ach.TransferRequest{SourceID: id, Name: "Ada Lovelace", Amount: 2500, Description: "rent", Label: "b1-r1"}
		}
		for _, s := range []*ach.FundingSource{pending, unverified} {
			_, err := c.Debit(ctx, tr(s.ID))
			ae := achErr(t, err, http.StatusPaymentRequired, apiwire.Permanent, ach.ErrNotVerified)
			if ae.Message != "Funding source is not verified for debits" {
				t.Errorf("402 message %q", ae.Message)
			}
		}
		got, err := c.Debit(ctx, tr(verified.ID))
		if err != nil || !uuidRE.MatchString(got.CheckID) {
			t.Errorf("debit of a Verified source: %+v %v", got, err)
		}
		for _, s := range []*ach.FundingSource{unverified, verified} {
			if got, err := c.Credit(ctx, tr(s.ID)); err != nil || got.CheckID == "" {
				t.Errorf("credit to %v source: %+v %v", s.Status, got, err)
			}
		}
		if _, err := c.Credit(ctx, tr(pending.ID)); apiwire.ClassOf(err) != apiwire.Permanent {
			t.Errorf("credit to a Pending source: %v, want refused (credits need Unverified or Verified)", err)
		}
		_, err = c.Debit(ctx, tr(unknownID))
		achErr(t, err, http.StatusNotFound, apiwire.Permanent, ach.ErrNotFound)
		_, err = e.achClient(keyB).Credit(ctx, tr(verified.ID))
		achErr(t, err, http.StatusNotFound, apiwire.Permanent, ach.ErrNotFound)

		r := e.achRaw(http.MethodPost, "/ach-debit", keyA, map[string]any{"sender": verified.ID, "amount": "25.001"})
		achRawErr(t, r, http.StatusBadRequest, "")
		if !namesField(r.message(), "amount") {
			t.Errorf("sub-cent amount: message %q does not name amount", r.message())
		}
		r = e.achRaw(http.MethodPost, "/check/send", keyA, map[string]any{"recipient": verified.ID, "amount": "1.00",
			"description": strings.Repeat("d", 129)})
		achRawErr(t, r, http.StatusBadRequest, "")
		if !namesField(r.message(), "description") {
			t.Errorf("long description: message %q does not name description", r.message())
		}
	})
}

// TestACHWebhooks checks the one webhook URL per key: empty at first,
// set, overwritten, and separate per key.
func TestACHWebhooks(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{})
		a, b := e.achClient(keyA), e.achClient(keyB)
		ctx := t.Context()
		if u, err := a.Webhook(ctx); err != nil || u != "" {
			t.Fatalf("Webhook before any registration: %q %v", u, err)
		}
		for _, u := range []string{"https://batchd.example/hooks/ach", "http://127.0.0.1:9000/hook?k=v"} {
			got, err := a.RegisterWebhook(ctx, u)
			if err != nil || got != u {
				t.Fatalf("RegisterWebhook(%s): %q %v", u, got, err)
			}
			if got, err := a.Webhook(ctx); err != nil || got != u {
				t.Errorf("Webhook after registering %s: %q %v", u, got, err)
			}
		}
		if got, err := b.Webhook(ctx); err != nil || got != "" {
			t.Errorf("another key's webhook: %q %v, want none", got, err)
		}
		r := e.achRaw(http.MethodPost, "/webhooks", keyA, map[string]any{"url": "/relative"})
		achRawErr(t, r, http.StatusBadRequest, "")
		if !namesField(r.message(), "url") {
			t.Errorf("relative URL: message %q does not name url", r.message())
		}
	})
}

// TestACHRouting checks what no client method reaches: an unknown path
// (404 no such endpoint, which is not ErrNotFound), a wrong method (405
// with Allow), an unknown provider segment, and the bare key accepted
// without "Bearer".
func TestACHRouting(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{})
		c := e.achClient(keyA)
		achRawErr(t, e.achRaw(http.MethodGet, "/no/such/thing", keyA, nil), http.StatusNotFound, "no such endpoint")
		r := e.achRaw(http.MethodDelete, "/user", keyA, nil)
		achRawErr(t, r, http.StatusMethodNotAllowed, "")
		if allow := r.header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
			t.Errorf("405 Allow = %q, want GET and POST", allow)
		}
		u := newCustomer(t, c)
		_, err := c.CreateProcessorFundingSource(t.Context(), "otherbank", u.ID, e.issueToken(keyA, "", "", freshAccount(), ""))
		ae := achErr(t, err, http.StatusNotFound, apiwire.Permanent)
		if ae.Message != "no such endpoint" {
			t.Errorf("unknown provider: message %q, want no such endpoint", ae.Message)
		}
		if r := e.achRaw(http.MethodGet, "/webhooks", "", nil, authHeader(keyA)); r.status != http.StatusOK {
			t.Errorf("bare key without Bearer: HTTP %d %s", r.status, r.body)
		}
	})
}

// TestACHSharedClock: the ACH API reads the eCheck API's per-key sandbox
// clock, and Options.Date starts every key on that day.
func TestACHSharedClock(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{Date: day(t, "2026-05-01")})
		c := e.achClient(keyA)
		if got := e.today(keyA); !got.Equal(day(t, "2026-05-01")) {
			t.Errorf("key clock starts on %s, want 2026-05-01", got.Format(time.DateOnly))
		}
		e.advance(keyA, 3)
		u := newCustomer(t, c)
		if !u.Created.Equal(time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)) {
			t.Errorf("customer created at %s, want the key's sandbox time 2026-05-04 12:00", u.Created)
		}
		s := newPending(t, c, u.ID, freshAccount())
		if !s.Created.Equal(day(t, "2026-05-04")) {
			t.Errorf("source created on %s, want 2026-05-04", s.Created.Format(time.DateOnly))
		}
		if got := e.today(keyB); !got.Equal(day(t, "2026-05-01")) {
			t.Errorf("keyB's clock moved to %s with keyA's", got.Format(time.DateOnly))
		}
	})
}
