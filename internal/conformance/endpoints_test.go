package conformance

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/sandbox"
)

// TestCheckEndpoints walks one check through every check endpoint of spec
// 4.1 with the client: create, get, list, edit, delete, and bankinfo.
func TestCheckEndpoints(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		// The real clock, as batchd's demo runs the sandbox.
		e := newEnv(t, m, sandbox.Options{Now: time.Now})
		c := e.client(keyA)
		ctx := t.Context()

		req := validRequest("endpoints")
		req.Number = "0004242" // quirks mode: the service keeps 4242
		req.Phone = "+1 555 0100"
		req.Address, req.City, req.State, req.Zip = "1 Main St", "Springfield", "IL", "62701"
		req.AuthorizationDate = e.today(keyA).Format("2006-01-02")
		req.TypeInfo = "batchd"
		created := create(t, c, req)

		t.Run("create", func(t *testing.T) {
			want := echeck.Check{
				CheckID: created.CheckID, Number: e.number("0004242"), Amount: 1234, Memo: req.Memo, Name: req.Name,
				Email: req.Email, Phone: req.Phone, Address: req.Address, City: req.City, State: req.State,
				Zip: req.Zip, Label: req.Label, AuthorizationDate: req.AuthorizationDate,
				Status: "in_process", BankRouting: fixtureRouting,
			}
			sameCheck(t, created, want)
			e.wantMasked(t, created.BankAccount, req.BankAccount)
			if _, err := time.Parse("2006-01-02 15:04:05", created.Date); err != nil {
				t.Errorf("creation date %q is not YYYY-MM-DD HH:MM:SS", created.Date)
			}
			if !uuidRE.MatchString(created.CheckID) {
				t.Errorf("check_id %q is not a hyphenated UUID", created.CheckID)
			}
		})

		t.Run("number filled in", func(t *testing.T) {
			ch := create(t, c, validRequest("auto-number"))
			if !regexp.MustCompile(`^[0-9]{1,10}$`).MatchString(ch.Number) {
				t.Errorf("number %q filled in automatically: want 1 to 10 digits", ch.Number)
			}
			if ch.Number == created.Number {
				t.Errorf("automatic number %q repeats the number of another check", ch.Number)
			}
		})

		t.Run("recurring", func(t *testing.T) {
			r := validRequest("recurring")
			six := 6
			r.Recurring, r.RecurringCycle, r.RecurringStartDate, r.RecurringInstallments = true, "bi-weekly", "2026-05-01", &six
			ch := create(t, c, r)
			for _, got := range []*echeck.Check{ch, get(t, c, ch.CheckID)} {
				if !got.Recurring || got.RecurringCycle != "bi-weekly" || got.RecurringStartDate != "2026-05-01" || got.RecurringInstallments != 6 {
					t.Errorf("recurring fields %v %q %q %d, want true bi-weekly 2026-05-01 6",
						got.Recurring, got.RecurringCycle, got.RecurringStartDate, got.RecurringInstallments)
				}
			}
			if created.Recurring || created.RecurringCycle != "" {
				t.Errorf("a check created without recurring shows recurring %v %q", created.Recurring, created.RecurringCycle)
			}
		})

		t.Run("get", func(t *testing.T) {
			got := get(t, c, created.CheckID)
			sameCheck(t, got, *created)
			if got.Date != created.Date || got.BankAccount != created.BankAccount {
				t.Errorf("get: date %q account %q, created %q %q", got.Date, got.BankAccount, created.Date, created.BankAccount)
			}
		})

		t.Run("list", func(t *testing.T) {
			p, err := c.ListChecks(ctx, echeck.ListParams{Label: "endpoints"})
			if err != nil {
				t.Fatalf("ListChecks: %v", err)
			}
			if p.Total != 1 || p.CurrentPage != 1 || p.LastPage != 1 || p.PerPage != 15 || len(p.Checks) != 1 {
				t.Fatalf("list: paging %+v with %d checks, want total 1, page 1 of 1, 15 per page", p.Paging, len(p.Checks))
			}
			sameCheck(t, &p.Checks[0], *created)
		})

		t.Run("bankinfo", func(t *testing.T) {
			info, err := c.BankInfo(ctx, fixtureRouting)
			if err != nil {
				t.Fatalf("BankInfo: %v", err)
			}
			if info.Routing != fixtureRouting || info.Name == "" {
				t.Errorf("BankInfo = %+v, want routing %s and a bank name", info, fixtureRouting)
			}
			if info.Name != created.BankName {
				t.Errorf("bank name %q differs from the check's %q", info.Name, created.BankName)
			}
			_, err = c.BankInfo(ctx, "123456789")
			apiErr(t, err, http.StatusNotFound, apiwire.Permanent, "")
		})

		t.Run("edit", func(t *testing.T) {
			ed := req
			ed.Amount, ed.Memo, ed.Label = 98765, "edited memo", "endpoints-edited"
			ed.BankAccount = account(8)
			got, err := c.EditCheck(ctx, created.CheckID, ed)
			if err != nil {
				t.Fatalf("EditCheck: %v", err)
			}
			want := *created
			want.Amount, want.Memo, want.Label = 98765, "edited memo", "endpoints-edited"
			sameCheck(t, got, want)
			sameCheck(t, get(t, c, created.CheckID), want)
			// The old label is a part of the new one: the exact label
			// filter no longer finds the check, the quirks mode's
			// substring filter (spec 2.1: "find similar checks") does.
			old := listByLabel(t, c, "endpoints")
			if !e.quirks && len(old) != 0 {
				t.Errorf("list by the old label finds %d checks, want 0", len(old))
			}
			if e.quirks && (len(old) != 1 || old[0].Label != "endpoints-edited") {
				t.Errorf("quirks mode: list by the old label finds %+v, want the check now labelled endpoints-edited", old)
			}
			if n := len(listByLabel(t, c, "endpoints-edited")); n != 1 {
				t.Errorf("list by the new label finds %d checks, want 1", n)
			}
			if n := len(listByLabel(t, c, "ENDPOINTS-EDITED")); e.quirks && n != 1 || !e.quirks && n != 0 {
				t.Errorf("list by the new label in capitals finds %d checks (quirks %v)", n, e.quirks)
			}

			// An edit that leaves phone out clears it in the exact mode and
			// keeps it in quirks mode (public-api-notes: "An edit that
			// omits phone leaves the phone as it was"); the address left
			// out with it is cleared in both.
			noPhone := ed
			noPhone.Phone, noPhone.Address, noPhone.City, noPhone.State, noPhone.Zip = "", "", "", "", ""
			got, err = c.EditCheck(ctx, created.CheckID, noPhone)
			if err != nil {
				t.Fatalf("EditCheck without phone: %v", err)
			}
			wantPhone := ""
			if e.quirks {
				wantPhone = req.Phone
			}
			for _, ch := range []*echeck.Check{got, get(t, c, created.CheckID)} {
				if ch.Phone != wantPhone || ch.Address != "" {
					t.Errorf("after an edit without phone and address: phone %q address %q, want phone %q and no address",
						ch.Phone, ch.Address, wantPhone)
				}
			}
			withPhone := noPhone
			withPhone.Phone = "555-0199"
			wantPhone = "555-0199"
			if e.quirks {
				wantPhone = req.Phone // the quirky edit ignores phone
			}
			if got, err = c.EditCheck(ctx, created.CheckID, withPhone); err != nil || got.Phone != wantPhone {
				t.Errorf("edit with a new phone: %+v, %v; want phone %q", got, err, wantPhone)
			}
			noNumber := ed
			noNumber.Number = ""
			_, err = c.EditCheck(ctx, created.CheckID, noNumber)
			apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "number")
		})

		t.Run("delete", func(t *testing.T) {
			if err := c.DeleteCheck(ctx, created.CheckID); err != nil {
				t.Fatalf("DeleteCheck: %v", err)
			}
			wantStatus(t, c, created.CheckID, "void")
			err := c.DeleteCheck(ctx, created.CheckID)
			apiErr(t, err, http.StatusPaymentRequired, apiwire.Permanent, "")
		})
	})
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// sameCheck compares the fields batchd acts on and the sender's details.
func sameCheck(t *testing.T, got *echeck.Check, want echeck.Check) {
	t.Helper()
	type view struct {
		ID, Number, Memo, Name, Email, Phone, Address, City, State, Zip, Label, AuthDate, Status, Routing string
		Amount                                                                                            int64
	}
	v := func(c *echeck.Check) view {
		return view{c.CheckID, c.Number, c.Memo, c.Name, c.Email, c.Phone, c.Address, c.City, c.State, c.Zip,
			c.Label, c.AuthorizationDate, c.Status, c.BankRouting, int64(c.Amount)}
	}
	if g, w := v(got), v(&want); g != w {
		t.Errorf("check\n got %+v\nwant %+v", g, w)
	}
}

// TestDeleteNeedsContentType: spec 4.1 makes Content-Type required on
// delete of a check. The client always sends it; the sandbox must refuse
// a delete without it and leave the check alone.
func TestDeleteNeedsContentType(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		c := e.client(keyA)
		ch := create(t, c, validRequest("ctype"))
		r := e.raw(http.MethodDelete, "/v1/check/"+ch.CheckID, keyA, nil, noContentType)
		rawErr(t, r, http.StatusBadRequest, "Content-Type")
		wantStatus(t, c, ch.CheckID, "in_process")
		if r := e.raw(http.MethodDelete, "/v1/check/"+ch.CheckID, keyA, nil); r.status != http.StatusOK {
			t.Fatalf("DELETE with Content-Type: HTTP %d %s", r.status, r.body)
		}
		wantStatus(t, c, ch.CheckID, "void")
	})
}

// TestFormEncodedCreate: spec 1 allows form-encoded bodies; the sandbox
// reads them with the same rules as JSON.
func TestFormEncodedCreate(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		base := "name=n&email=a%40b.c&bank_routing=" + fixtureRouting + "&bank_account=" + account(16) + "&label=form"
		r := e.rawForm(http.MethodPost, "/v1/check/create", keyA, base+"&memo=m&amount=10.05")
		if r.status != http.StatusOK {
			t.Fatalf("form create: HTTP %d %s", r.status, r.body)
		}
		got := listByLabel(t, e.client(keyA), "form")
		if len(got) != 1 || got[0].Amount != 1005 || got[0].Status != "in_process" {
			t.Fatalf("form create: list %+v, want one check of 10.05 in_process", got)
		}
		rawErr(t, e.rawForm(http.MethodPost, "/v1/check/create", keyA, base+"&memo=m&amount=0"), http.StatusBadRequest, "amount")
		rawErr(t, e.rawForm(http.MethodPost, "/v1/check/create", keyA, base+"&amount=5&memo="+strings.Repeat("m", 129)),
			http.StatusBadRequest, "memo")
	})
}

// TestTokenization: a token stands for routing and account on a later
// check, together with its store (spec 2.1 rules 1-2, 2.3).
func TestTokenization(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		c := e.client(keyA)
		ctx := t.Context()
		tok, err := c.Tokenize(ctx, echeck.TokenizeRequest{
			FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", Phone: "555-0100",
			BankAccount: account(16), BankRouting: fixtureRouting, Store: "conformance-store",
		})
		if err != nil {
			t.Fatalf("Tokenize: %v", err)
		}
		if len(tok.Token) != 36 || tok.Routing != fixtureRouting || tok.Last4 != "0016" {
			t.Fatalf("Tokenize = token %d chars, routing %q, last4 %q; want 36, %s, 0016",
				len(tok.Token), tok.Routing, tok.Last4, fixtureRouting)
		}

		req := validRequest("tokenized")
		req.BankAccount, req.BankRouting = "", ""
		req.Token, req.Store = tok.Token, "conformance-store"
		req.VerifyBeforeSave, req.FundConfirmation = true, true
		ch := create(t, c, req)
		if ch.Status != "in_process" || ch.BankRouting != fixtureRouting {
			t.Errorf("check by token: status %q routing %q; want in_process on the token's routing",
				ch.Status, ch.BankRouting)
		}
		e.wantMasked(t, ch.BankAccount, account(16))
		if ch.BasicVerification == nil || ch.BasicVerification.Risk != "Pass" ||
			ch.FundsConfirmation == nil || ch.FundsConfirmation.Verification != "SufficientFunds" {
			t.Errorf("check by token: verification %+v %+v; want fixture 16 (Pass, SufficientFunds)",
				ch.BasicVerification, ch.FundsConfirmation)
		}
		if got := listByLabel(t, c, "tokenized"); len(got) != 1 || got[0].CheckID != ch.CheckID {
			t.Errorf("list by label: %d checks, want the tokenized one", len(got))
		}

		t.Run("token of another store", func(t *testing.T) {
			r := req
			r.Store = "other-store"
			_, err := c.CreateCheck(ctx, r)
			if apiwire.ClassOf(err) != apiwire.Permanent {
				t.Errorf("token with another store: %v, want a permanent refusal", err)
			}
		})
		t.Run("token of another key", func(t *testing.T) {
			_, err := e.client(keyB).CreateCheck(ctx, req)
			if apiwire.ClassOf(err) != apiwire.Permanent {
				t.Errorf("token used by another key: %v, want a permanent refusal", err)
			}
		})

		t.Run("validation", func(t *testing.T) {
			good := echeck.TokenizeRequest{FirstName: "A", LastName: "B", BankAccount: account(1), BankRouting: fixtureRouting, Store: "s"}
			cases := []struct {
				name, field string
				mut         func(*echeck.TokenizeRequest)
			}{
				{"first_name missing", "first_name", func(r *echeck.TokenizeRequest) { r.FirstName = "" }},
				{"first_name 129", "first_name", func(r *echeck.TokenizeRequest) { r.FirstName = strings.Repeat("f", 129) }},
				{"last_name missing", "last_name", func(r *echeck.TokenizeRequest) { r.LastName = "" }},
				{"last_name 129", "last_name", func(r *echeck.TokenizeRequest) { r.LastName = strings.Repeat("l", 129) }},
				{"email 81", "email", func(r *echeck.TokenizeRequest) { r.Email = strings.Repeat("e", 69) + "@example.com" }},
				{"phone 21", "phone", func(r *echeck.TokenizeRequest) { r.Phone = strings.Repeat("5", 21) }},
				{"account 3 digits", "bank_account", func(r *echeck.TokenizeRequest) { r.BankAccount = "123" }},
				{"account 18 digits", "bank_account", func(r *echeck.TokenizeRequest) { r.BankAccount = strings.Repeat("1", 18) }},
				{"routing 8 digits", "bank_routing", func(r *echeck.TokenizeRequest) { r.BankRouting = "99990000" }},
				{"routing missing", "bank_routing", func(r *echeck.TokenizeRequest) { r.BankRouting = "" }},
				{"store missing", "store", func(r *echeck.TokenizeRequest) { r.Store = "" }},
				{"store 129", "store", func(r *echeck.TokenizeRequest) { r.Store = strings.Repeat("s", 129) }},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					r := good
					tc.mut(&r)
					_, err := c.Tokenize(ctx, r)
					e := apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, tc.field)
					if strings.Contains(e.Error(), r.BankAccount) && len(r.BankAccount) > 4 {
						t.Errorf("error text shows the account number: %v", e)
					}
				})
			}
		})
	})
}

// TestPaymentLinks: create, list and change status (spec 2.2, 4.1), and a
// payer completing a link through the sandbox's stand-in for the hosted
// page, whose check the list finds by link_id.
func TestPaymentLinks(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		c := e.client(keyA)
		ctx := t.Context()
		three := 3
		link, err := c.CreatePaymentLink(ctx, echeck.PaymentLinkRequest{
			Amount: 2599, Memo: "Invoice 7", ThankYouURL: "https://shop.example/thanks", ErrorURL: "https://shop.example/oops",
			Recurring: true, RecurringCycle: "month", RecurringInstallments: &three, BasicVerification: true,
		})
		if err != nil {
			t.Fatalf("CreatePaymentLink: %v", err)
		}
		if len(link.CheckoutToken) != 36 || link.Amount != 2599 || link.Memo != "Invoice 7" || link.Link == "" {
			t.Fatalf("CreatePaymentLink = %+v; want a 36-character token, 25.99, the memo and a link", link)
		}
		other, err := c.CreatePaymentLink(ctx, echeck.PaymentLinkRequest{Memo: "open amount"})
		if err != nil {
			t.Fatalf("CreatePaymentLink without amount: %v", err)
		}

		list := func() map[string]echeck.PaymentLink {
			t.Helper()
			p, err := c.ListPaymentLinks(ctx, echeck.ListParams{})
			if err != nil {
				t.Fatalf("ListPaymentLinks: %v", err)
			}
			if p.Total != 2 || p.CurrentPage != 1 || p.LastPage != 1 || p.PerPage != 15 || len(p.Links) != 2 {
				t.Fatalf("ListPaymentLinks: paging %+v with %d links, want total 2 on one page of 15", p.Paging, len(p.Links))
			}
			m := map[string]echeck.PaymentLink{}
			for _, l := range p.Links {
				m[l.CheckoutToken] = l
			}
			return m
		}
		before := list()
		if l, ok := before[link.CheckoutToken]; !ok || l.Amount != 2599 || l.Memo != "Invoice 7" {
			t.Errorf("listed link %+v, want 25.99 Invoice 7", l)
		}
		if _, ok := before[other.CheckoutToken]; !ok {
			t.Error("the second link is not listed")
		}

		// A payer completes the link: the check carries the link's amount and
		// memo, and the check list's link_id filter finds it.
		pay := e.raw(http.MethodPost, "/_sandbox/paymentlink/pay", keyA, map[string]any{
			"checkout_token": link.CheckoutToken, "name": "Payer", "email": "payer@example.com",
			"bank_routing": fixtureRouting, "bank_account": account(20),
		})
		if pay.status != http.StatusOK {
			t.Fatalf("pay link: HTTP %d %s", pay.status, pay.body)
		}
		p, err := c.ListChecks(ctx, echeck.ListParams{LinkID: link.CheckoutToken})
		if err != nil {
			t.Fatalf("ListChecks by link_id: %v", err)
		}
		if p.Total != 1 || len(p.Checks) != 1 || p.Checks[0].Amount != 2599 || p.Checks[0].Memo != "Invoice 7" {
			t.Errorf("checks of the link: %+v, want one check of 25.99 Invoice 7", p.Checks)
		}

		if err := c.ChangePaymentLinkStatus(ctx, link.CheckoutToken); err != nil {
			t.Fatalf("ChangePaymentLinkStatus: %v", err)
		}
		after := list()
		if s := after[link.CheckoutToken].Status; s == before[link.CheckoutToken].Status {
			t.Errorf("status after changestatus is still %q", s)
		}
		if s := after[other.CheckoutToken].Status; s != before[other.CheckoutToken].Status {
			t.Errorf("changestatus of one link changed another's status to %q", s)
		}
		pay = e.raw(http.MethodPost, "/_sandbox/paymentlink/pay", keyA, map[string]any{
			"checkout_token": link.CheckoutToken, "name": "Payer", "email": "payer@example.com",
			"bank_routing": fixtureRouting, "bank_account": account(20),
		})
		if pay.status == http.StatusOK {
			t.Error("a deactivated payment link still takes a payment")
		}

		t.Run("list limits", func(t *testing.T) {
			_, err := c.ListPaymentLinks(ctx, echeck.ListParams{Limit: 101})
			apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "limit")
			_, err = c.ListPaymentLinks(ctx, echeck.ListParams{Page: -1})
			apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "page")
			p, err := c.ListPaymentLinks(ctx, echeck.ListParams{Limit: 1, Page: 2, Direction: "ASC"})
			if err != nil {
				t.Fatalf("ListPaymentLinks: %v", err)
			}
			if p.PerPage != 1 || p.CurrentPage != 2 || p.LastPage != 2 || p.Total != 2 || len(p.Links) != 1 {
				t.Errorf("limit 1 page 2: %+v with %d links", p.Paging, len(p.Links))
			}
		})

		t.Run("unknown token", func(t *testing.T) {
			err := c.ChangePaymentLinkStatus(ctx, "00000000-0000-4000-8000-000000000000")
			apiErr(t, err, http.StatusNotFound, apiwire.Permanent, "")
			err = e.client(keyB).ChangePaymentLinkStatus(ctx, other.CheckoutToken)
			apiErr(t, err, http.StatusNotFound, apiwire.Permanent, "")
			err = c.ChangePaymentLinkStatus(ctx, "short-token")
			apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "checkout_token")
		})
	})
}

// TestPaymentLinkListSortAsForCheckList: spec 4.1 gives the payment link
// list "limit, page, sort, direction as for the check list", whose sort
// values are date, number and name. The sandbox accepts date, amount and
// memo only, and answers 400 to number and name (reported as a sandbox
// deviation; batchd itself sends no sort to this list).
func TestPaymentLinkListSortAsForCheckList(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		c := e.client(keyA)
		for _, memo := range []string{"b", "a"} {
			if _, err := c.CreatePaymentLink(t.Context(), echeck.PaymentLinkRequest{Amount: 100, Memo: memo}); err != nil {
				t.Fatalf("CreatePaymentLink: %v", err)
			}
		}
		for _, sort := range []string{"date", "number", "name"} {
			for _, dir := range []string{"ASC", "DESC"} {
				p, err := c.ListPaymentLinks(t.Context(), echeck.ListParams{Sort: sort, Direction: dir})
				if err != nil {
					t.Errorf("payment link list sort=%s direction=%s: %v", sort, dir, err)
				} else if len(p.Links) != 2 {
					t.Errorf("payment link list sort=%s direction=%s: %d links, want 2", sort, dir, len(p.Links))
				}
			}
		}
	})
}
