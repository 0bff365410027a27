package ach

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
)

func TestParseStatus(t *testing.T) {
	cases := map[string]Status{
		"Pending": StatusPending, "pending": StatusPending, "PENDING": StatusPending,
		"pending_verification": StatusPending,
		"Unverified":           StatusUnverified, "unverified": StatusUnverified,
		"Verified": StatusVerified, "verified": StatusVerified, " VERIFIED ": StatusVerified,
		"verification_failed": StatusVerificationFailed, "VerificationFailed": StatusVerificationFailed,
		"verification-failed": StatusVerificationFailed,
		"deleted":             StatusDeleted, "Deleted": StatusDeleted,
		"": StatusUnknown, "added": StatusUnknown, "login_required": StatusUnknown,
		"verification_expired": StatusUnknown, "unverifiedx": StatusUnknown, "1": StatusUnknown,
	}
	for in, want := range cases {
		if got := ParseStatus(in); got != want {
			t.Errorf("ParseStatus(%q) = %v, want %v", in, got, want)
		}
	}
	for s := StatusUnknown; s <= StatusDeleted; s++ {
		if s != StatusUnknown && ParseStatus(s.String()) != s {
			t.Errorf("ParseStatus(%v.String()) = %v", s, ParseStatus(s.String()))
		}
	}
	if !StatusVerified.CanDebit() || StatusUnverified.CanDebit() || StatusPending.CanDebit() {
		t.Error("CanDebit: only Verified")
	}
	if !StatusUnverified.CanCredit() || !StatusVerified.CanCredit() || StatusPending.CanCredit() || StatusDeleted.CanCredit() {
		t.Error("CanCredit: Unverified and Verified")
	}
}

// answerWith serves body to every request.
func answerWith(t *testing.T, body string) *Client {
	t.Helper()
	srv, _ := fakeService(t, reply(200, body))
	return newTestClient(t, srv.URL)
}

func TestUserShapes(t *testing.T) {
	ctx := context.Background()
	want := User{ID: testUser, FirstName: "Ann", LastName: "Lee", Email: "ann@example.com", Phone: "5550100",
		Created: time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)}
	for name, body := range map[string]string{
		"contract":            `{"success":true,"user_id":"` + testUser + `","user":` + userJSON + `}`,
		"nested id only":      `{"success":true,"user":` + userJSON + `}`,
		"top-level id only":   `{"success":true,"user_id":"` + testUser + `","user":` + strings.Replace(userJSON, `"user_id":"`+testUser+`",`, "", 1) + `}`,
		"customer_id nested":  `{"success":"1","user":` + strings.Replace(userJSON, `"user_id"`, `"customer_id"`, 1) + `}`,
		"id nested":           `{"success":1,"user":` + strings.Replace(userJSON, `"user_id"`, `"id"`, 1) + `}`,
		"customer_id top":     `{"success":true,"customer_id":"` + testUser + `","firstName":"Ann","lastName":"Lee","email":"ann@example.com","phone":5550100,"created_at":"2026-03-04 12:00:00"}`,
		"bare object":         strings.Replace(userJSON, `"sources":[]`, `"sources":{}`, 1),
		"under customer":      `{"customer":` + userJSON + `,"unknown":{"x":[1,2]}}`,
		"snake-case names":    `{"user":{"id":"` + testUser + `","first_name":"Ann","last_name":"Lee","email":"ann@example.com","phone":"5550100","created_at":"2026-03-04 12:00:00"}}`,
		"unknown fields kept": `{"success":true,"extra":[{}],"user":` + strings.Replace(userJSON, `"sources":[]`, `"sources":null,"plan":{"a":1}`, 1) + `}`,
	} {
		t.Run(name, func(t *testing.T) {
			c := answerWith(t, body)
			for _, get := range []func() (*User, error){
				func() (*User, error) { return c.CreateUser(ctx, UserRequest{}) },
				func() (*User, error) { return c.GetUser(ctx, testUser) },
			} {
				u, err := get()
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				if !reflect.DeepEqual(*u, want) {
					t.Errorf("user\n got %+v\nwant %+v", *u, want)
				}
			}
		})
	}
	t.Run("numeric id", func(t *testing.T) {
		u, err := answerWith(t, `{"success":true,"user":{"customer_id":4242}}`).CreateUser(ctx, UserRequest{})
		if err != nil || u.ID != "4242" {
			t.Errorf("numeric customer_id: %+v, %v", u, err)
		}
	})
}

func TestUserListShapes(t *testing.T) {
	ctx := context.Background()
	contract := `{"success":true,"list":{"current_page":1,"last_page":2,"per_page":15,"total":16,"data":[` +
		`{"user_id":"u1","email":"a@x","sources":[{"source_id":"s1","status":"Verified","is_primary":true},{"source_id":"s2","status":"Pending","is_primary":false}]},` +
		`{"user_id":"u2","email":"b@x","sources":[]}]}}`
	quirks := `{"success":true,"list":{"current_page":"1","last_page":"2","per_page":"15","total":16,"data":{"1":` +
		`{"id":"u2","email":"b@x","sources":[]},"0":` +
		`{"id":"u1","email":"a@x","sources":[{"id":"s1","status":"verified","is_primary":1},{"id":"s2","status":"pending","is_primary":"0"}]}}}}`
	flat := `{"success":true,"current_page":1.0,"last_page":2,"per_page":15,"total":"16","data":[` +
		`{"customer_id":"u1","email":"a@x","sources":[{"funding_source_id":"s1","status":"VERIFIED","is_primary":"true"},{"source_id":"s2","status":"Pending"}]},` +
		`{"user_id":"u2","email":"b@x"}]}`
	for name, body := range map[string]string{"contract": contract, "quirks": quirks, "flat": flat} {
		t.Run(name, func(t *testing.T) {
			p, err := answerWith(t, body).ListUsers(ctx, 1, 15)
			if err != nil {
				t.Fatal(err)
			}
			if p.Paging != (Paging{1, 2, 15, 16}) {
				t.Errorf("paging %+v", p.Paging)
			}
			if len(p.Users) != 2 || p.Users[0].ID != "u1" || p.Users[1].ID != "u2" || p.Users[0].Email != "a@x" {
				t.Fatalf("users %+v", p.Users)
			}
			s := p.Users[0].Sources
			if len(s) != 2 || s[0].ID != "s1" || s[0].Status != StatusVerified || !s[0].Primary ||
				s[1].ID != "s2" || s[1].Status != StatusPending || s[1].Primary || s[0].UserID != "u1" {
				t.Errorf("sources %+v", s)
			}
			if len(p.Users[1].Sources) != 0 {
				t.Errorf("second user sources %+v", p.Users[1].Sources)
			}
		})
	}
	for name, body := range map[string]string{
		"paging as word":  `{"list":{"current_page":"one","data":[]}}`,
		"entry as string": `{"list":{"data":["u1"]}}`,
		"entry no id":     `{"list":{"data":[{"email":"a@x"}]}}`,
		"id as object":    `{"list":{"data":[{"user_id":{"v":1}}]}}`,
		"data as string":  `{"list":{"data":"none"}}`,
	} {
		t.Run("refused/"+name, func(t *testing.T) {
			_, err := answerWith(t, body).ListUsers(ctx, 0, 0)
			if e := asError(t, err); e.Class != apiwire.Permanent || e.Status != 200 {
				t.Errorf("%v, want Permanent unreadable answer", err)
			}
		})
	}
}

func TestFundingSourceShapes(t *testing.T) {
	ctx := context.Background()
	want := FundingSource{ID: testSource, UserID: testUser, Status: StatusPending, StatusText: "Pending",
		Routing: testRouting, Bank: "Test Bank", Last4: "9876", Type: Checking, Nickname: "rent",
		Created: time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)}
	cases := map[string]struct {
		body string
		edit func(*FundingSource)
	}{
		"contract create": {`{"success":true,"funding_source_id":"` + testSource + `","status":"Pending","funding_source":` + sourceJSON + `}`, nil},
		"quirks create": {`{"success":true,"funding_source_id":"` + testSource + `","status":"pending","funding_source":` +
			strings.NewReplacer(`"Pending"`, `"pending"`, `"is_primary":false`, `"is_primary":0`).Replace(sourceJSON) + `}`,
			func(s *FundingSource) { s.StatusText = "pending" }},
		"only top-level id": {`{"success":true,"funding_source_id":"` + testSource + `","status":"Pending","funding_source":` +
			strings.NewReplacer(`"source_id":"`+testSource+`",`, ``, `"funding_source_id":"`+testSource+`",`, ``).Replace(sourceJSON) + `}`, nil},
		"id under id": {`{"funding_source":` + strings.NewReplacer(`"source_id"`, `"id"`, `"funding_source_id":"`+testSource+`",`, ``).Replace(sourceJSON) + `}`, nil},
		"on-demand flat": {`{"success":true,"funding_source_id":"` + testSource + `","status":"Pending","bank_name":"Test Bank","last_four":"9876",` +
			`"user_id":"` + testUser + `","routing_number":"999900001","account_type":"Checking","nickname":"rent","created_at":"03/04/2026"}`, nil},
		"processor": {`{"success":true,"funding_source":` + strings.NewReplacer(`"Pending"`, `"verified"`, `"is_primary":false`, `"is_primary":true`).Replace(sourceJSON) + `}`,
			func(s *FundingSource) { s.Status, s.StatusText, s.Primary = StatusVerified, "verified", true }},
		"primary as string": {`{"funding_source":` + strings.Replace(sourceJSON, `"is_primary":false`, `"is_primary":"1"`, 1) + `}`,
			func(s *FundingSource) { s.Primary = true }},
		"status in top level only": {`{"funding_source_id":"` + testSource + `","status":"Unverified","funding_source":` +
			strings.Replace(sourceJSON, `"status":"Pending",`, ``, 1) + `}`,
			func(s *FundingSource) { s.Status, s.StatusText = StatusUnverified, "Unverified" }},
		"long last four masked": {`{"funding_source":` + strings.NewReplacer(`"lbacc":"9876",`, ``, `"last_four":"9876"`, `"last_four":"`+testAccount+`"`).Replace(sourceJSON) + `}`, nil},
		"owner nested":          {`{"funding_source":` + strings.Replace(sourceJSON, `"user_id":"`+testUser+`"`, `"user":{"id":"`+testUser+`"}`, 1) + `}`, nil},
		"unknown status word": {`{"funding_source":` + strings.Replace(sourceJSON, `"Pending"`, `"login_required"`, 1) + `}`,
			func(s *FundingSource) { s.Status, s.StatusText = StatusUnknown, "login_required" }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := answerWith(t, tc.body)
			w := want
			if tc.edit != nil {
				tc.edit(&w)
			}
			for i, get := range []func() (*FundingSource, error){
				func() (*FundingSource, error) {
					return c.CreateFundingSource(ctx, FundingSourceRequest{UserID: testUser, Routing: testRouting, Account: testAccount, Type: Checking})
				},
				func() (*FundingSource, error) { return c.GetFundingSource(ctx, testSource) },
			} {
				s, err := get()
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if !reflect.DeepEqual(*s, w) {
					t.Errorf("call %d: source\n got %+v\nwant %+v", i, *s, w)
				}
			}
		})
	}
}

func TestFundingSourceListShapes(t *testing.T) {
	ctx := context.Background()
	quirkSource := strings.NewReplacer(`"source_id"`, `"id"`, `"funding_source_id":"`+testSource+`",`, ``,
		`"user_id":"`+testUser+`",`, ``, `"Pending"`, `"deleted"`, `"is_primary":false`, `"is_primary":1`).Replace(sourceJSON)
	for name, body := range map[string]string{
		"contract":      `{"success":true,"list":[` + strings.Replace(sourceJSON, `"Pending"`, `"deleted"`, 1) + `]}`,
		"quirks":        `{"success":true,"list":[` + quirkSource + `]}`,
		"list.data":     `{"success":true,"list":{"data":[` + quirkSource + `]}}`,
		"php object":    `{"success":true,"list":{"0":` + quirkSource + `}}`,
		"named members": `{"success":true,"funding_sources":[` + quirkSource + `]}`,
	} {
		t.Run(name, func(t *testing.T) {
			l, err := answerWith(t, body).ListFundingSources(ctx, testUser)
			if err != nil {
				t.Fatal(err)
			}
			if len(l) != 1 {
				t.Fatalf("%d sources: %+v", len(l), l)
			}
			s := l[0]
			if s.ID != testSource || s.UserID != testUser || s.Status != StatusDeleted || s.Last4 != "9876" {
				t.Errorf("source %+v", s)
			}
			if name != "contract" && !s.Primary {
				t.Errorf("is_primary 1 read as false")
			}
		})
	}
	l, err := answerWith(t, `{"success":true,"list":[]}`).ListFundingSources(ctx, testUser)
	if err != nil || len(l) != 0 {
		t.Errorf("empty list: %v %v", l, err)
	}
}

func TestUnreadableAnswers(t *testing.T) {
	ctx := context.Background()
	for name, body := range map[string]string{
		"not json":     `<html>ok</html>`,
		"empty":        ``,
		"no id":        `{"success":true,"message":"done"}`,
		"id as object": `{"success":true,"funding_source":{"source_id":{"x":1}}}`,
		"status list":  `{"success":true,"funding_source":{"source_id":"s","status":["Verified"]}}`,
		"array":        `[]`,
	} {
		t.Run(name, func(t *testing.T) {
			c := answerWith(t, body)
			_, err := c.CreateOnDemandFundingSource(ctx, FundingSourceRequest{UserID: testUser, Routing: testRouting, Account: testAccount})
			if e := asError(t, err); e.Class != apiwire.Ambiguous || e.Status != 200 {
				t.Errorf("create: %v, want Ambiguous (the source may exist)", err)
			}
			_, err = c.GetFundingSource(ctx, testSource)
			if e := asError(t, err); e.Class != apiwire.Permanent || e.Status != 200 {
				t.Errorf("get: %v, want Permanent", err)
			}
		})
	}
	t.Run("answer about another source", func(t *testing.T) {
		_, err := answerWith(t, `{"funding_source":{"source_id":"other"}}`).GetFundingSource(ctx, testSource)
		if apiwire.ClassOf(err) != apiwire.Permanent || !strings.Contains(err.Error(), "other") {
			t.Errorf("%v, want Permanent naming the other source", err)
		}
	})
}

func TestSmallAnswers(t *testing.T) {
	ctx := context.Background()
	t.Run("verification", func(t *testing.T) {
		v, err := answerWith(t, `{"success":true,"funding_source_id":"`+testSource+`","status":"Pending","message":"Micro-deposits sent"}`).InitiateVerification(ctx, testSource)
		if err != nil || v.SourceID != testSource || v.Status != StatusPending || v.Message != "Micro-deposits sent" {
			t.Errorf("initiate: %+v %v", v, err)
		}
		v, err = answerWith(t, `{"success":1,"status":"verified"}`).Verify(ctx, testSource, 7, 15)
		if err != nil || v.SourceID != testSource || v.Status != StatusVerified {
			t.Errorf("verify: %+v %v", v, err)
		}
		v, err = answerWith(t, `{"success":true,"funding_source":{"source_id":"`+testSource+`","status":"VERIFIED"}}`).Verify(ctx, testSource, 7, 15)
		if err != nil || v.Status != StatusVerified {
			t.Errorf("verify nested: %+v %v", v, err)
		}
	})
	t.Run("availability", func(t *testing.T) {
		for body, want := range map[string]Availability{
			`{"success":true,"available":true}`:                   {Available: true},
			`{"success":true,"available":0,"user_id":"u1"}`:       {UserID: "u1"},
			`{"success":"true","available":"false","user_id":""}`: {},
			`{"available":"1"}`:                                   {Available: true},
		} {
			a, err := answerWith(t, body).AccountAvailable(ctx, testRouting, testAccount)
			if err != nil || *a != want {
				t.Errorf("%s: %+v %v, want %+v", body, a, err, want)
			}
		}
		for _, body := range []string{`{"success":true}`, `{"available":"maybe"}`, `{"available":{"a":1}}`} {
			if _, err := answerWith(t, body).AccountAvailable(ctx, testRouting, testAccount); apiwire.ClassOf(err) != apiwire.Permanent {
				t.Errorf("%s: %v, want Permanent", body, err)
			}
		}
	})
	t.Run("transfer", func(t *testing.T) {
		for _, body := range []string{`{"success":true,"check_id":"c1"}`, `{"check":{"check_id":"c1","status":"pending"}}`, `{"check_id":"c1","data":{"x":1}}`} {
			tr, err := answerWith(t, body).Debit(ctx, TransferRequest{SourceID: testSource, Amount: 1})
			if err != nil || tr.CheckID != "c1" {
				t.Errorf("%s: %+v %v", body, tr, err)
			}
		}
		if _, err := answerWith(t, `{"success":true}`).Credit(ctx, TransferRequest{SourceID: testSource, Amount: 1}); apiwire.ClassOf(err) != apiwire.Ambiguous {
			t.Errorf("credit without check_id: %v, want Ambiguous", err)
		}
	})
	t.Run("webhook", func(t *testing.T) {
		for body, want := range map[string]string{
			`{"success":true,"webhook_url":""}`:                  "",
			`{"success":true,"webhook_url":null}`:                "",
			`{"success":true,"webhook_url":"https://x.example"}`: "https://x.example",
			`{"success":true,"url":"https://x.example/h?a=1&b"}`: "https://x.example/h?a=1&b",
		} {
			got, err := answerWith(t, body).Webhook(ctx)
			if err != nil || got != want {
				t.Errorf("%s: %q %v, want %q", body, got, err, want)
			}
		}
	})
	t.Run("bare 204 to a remove", func(t *testing.T) {
		srv, _ := fakeService(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(204) })
		c := newTestClient(t, srv.URL)
		if err := c.RemoveFundingSource(ctx, testUser, testSource); err != nil {
			t.Errorf("remove: %v", err)
		}
		if err := c.DeleteAccount(ctx, testRouting, testAccount); err != nil {
			t.Errorf("delete account: %v", err)
		}
		if _, err := c.Debit(ctx, TransferRequest{SourceID: testSource, Amount: 1}); apiwire.ClassOf(err) != apiwire.Ambiguous {
			t.Errorf("debit answered 204: %v, want Ambiguous", err)
		}
	})
}
