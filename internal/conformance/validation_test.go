package conformance

import (
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/sandbox"
)

// toRequest converts a wire body to the client's request. ok is false when
// the typed client cannot express the body (a negative or non-numeric
// amount, recurring 2, a flag that is not a bool): such a case is sent raw
// only.
func toRequest(w wire) (r echeck.CheckRequest, ok bool) {
	text := map[string]*string{
		"number": &r.Number, "memo": &r.Memo, "name": &r.Name, "email": &r.Email,
		"authorization_date": &r.AuthorizationDate, "label": &r.Label, "phone": &r.Phone,
		"address": &r.Address, "city": &r.City, "state": &r.State, "zip": &r.Zip,
		"bank_account": &r.BankAccount, "bank_routing": &r.BankRouting, "token": &r.Token,
		"store": &r.Store, "type_info": &r.TypeInfo, "recurring_cycle": &r.RecurringCycle,
		"recurring_start_date": &r.RecurringStartDate,
	}
	flags := map[string]*bool{"verify_before_save": &r.VerifyBeforeSave, "fund_confirmation": &r.FundConfirmation}
	for k, v := range w {
		switch k {
		case "amount":
			n, isNum := v.(json.Number)
			if !isNum {
				return r, false
			}
			abs, neg := strings.CutPrefix(string(n), "-")
			c, err := money.Parse(abs)
			if err != nil {
				return r, false
			}
			if neg {
				c = -c
			}
			r.Amount = c
		case "recurring":
			n, _ := v.(int)
			if n != 0 && n != 1 {
				return r, false
			}
			r.Recurring = n == 1
		case "recurring_installments":
			n, isInt := v.(int)
			if !isInt {
				return r, false
			}
			r.RecurringInstallments = &n
		default:
			if p, isText := text[k]; isText {
				s, isStr := v.(string)
				if !isStr {
					return r, false
				}
				*p = s
			} else if p, isFlag := flags[k]; isFlag {
				b, isBool := v.(bool)
				if !isBool {
					return r, false
				}
				*p = b
			} else {
				return r, false
			}
		}
	}
	return r, true
}

// TestCheckValidation runs every rule of checkRules four ways: create and
// edit, each through the client and raw with net/http. The raw requests
// prove that the sandbox enforces a rule even where the client would not
// send the input; the client requests prove that the client reports the
// sandbox's 400 as Permanent with the field named, or refuses the input
// itself without a request.
func TestCheckValidation(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		c := e.client(keyA)
		today := e.today(keyA)
		target := create(t, c, validRequest("edit-target"))

		for _, tc := range checkRules() {
			t.Run(tc.name, func(t *testing.T) {
				w := baseWire()
				tc.set(w, today)
				t.Run("create/raw", func(t *testing.T) {
					checkRaw(t, e, "/v1/check/create", w, tc.field)
				})
				t.Run("create/client", func(t *testing.T) {
					checkClient(t, e, tc, w, func(r echeck.CheckRequest) (*echeck.Check, error) {
						return c.CreateCheck(t.Context(), r)
					})
				})
				if tc.createOnly {
					return
				}
				ew := maps.Clone(w)
				ew["check_id"] = target.CheckID
				if _, ok := ew["number"]; !ok {
					ew["number"] = target.Number // required on edit (spec 4.1)
				}
				t.Run("edit/raw", func(t *testing.T) {
					checkRaw(t, e, "/v1/check/edit", ew, tc.field)
				})
				t.Run("edit/client", func(t *testing.T) {
					delete(ew, "check_id")
					checkClient(t, e, tc, ew, func(r echeck.CheckRequest) (*echeck.Check, error) {
						return c.EditCheck(t.Context(), target.CheckID, r)
					})
				})
			})
		}
		wantStatus(t, c, target.CheckID, "in_process")
	})
}

// checkRaw posts w to path and checks the answer: 200 with an in_process
// check when field is "", else 400 naming field.
func checkRaw(t *testing.T, e *env, path string, w wire, field string) {
	t.Helper()
	r := e.raw(http.MethodPost, path, keyA, w)
	if field != "" {
		rawErr(t, r, http.StatusBadRequest, field)
		return
	}
	if r.status != http.StatusOK {
		t.Fatalf("HTTP %d, want 200: %s", r.status, r.body)
	}
	if s := r.obj("check")["status"]; s != "in_process" {
		t.Errorf("check status %v, want in_process: %s", s, r.body)
	}
}

// checkClient sends w through the client with send.
func checkClient(t *testing.T, e *env, tc vcase, w wire, send func(echeck.CheckRequest) (*echeck.Check, error)) {
	t.Helper()
	req, ok := toRequest(w)
	if !ok {
		t.Log("the typed client cannot express this body; covered by the raw request")
		return
	}
	before := e.requests()
	ch, err := send(req)
	switch {
	case tc.clientRefuses:
		refused(t, e, before, err)
	case tc.field != "":
		apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, tc.field)
	case err != nil:
		t.Fatalf("want success: %v", err)
	case ch.Status != "in_process":
		t.Errorf("status %q, want in_process", ch.Status)
	}
}

// TestAuthorizationDateFollowsSandboxClock: the 30-day window moves with
// the key's sandbox clock, not the real one.
func TestAuthorizationDateFollowsSandboxClock(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		c := e.client(keyA)
		start := e.today(keyA)
		e.advance(keyA, 40)
		today := e.today(keyA)
		if got := today.Sub(start).Hours() / 24; got != 40 {
			t.Fatalf("clock moved %v days, want 40", got)
		}
		for _, tc := range []struct {
			days  int
			field string
		}{{0, ""}, {-30, ""}, {-31, "authorization_date"}, {1, "authorization_date"}} {
			req := validRequest("authdate")
			req.AuthorizationDate = today.AddDate(0, 0, tc.days).Format("2006-01-02")
			ch, err := c.CreateCheck(t.Context(), req)
			if tc.field != "" {
				apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, tc.field)
			} else if err != nil {
				t.Errorf("authorization_date %s (%+d days): %v", req.AuthorizationDate, tc.days, err)
			} else if ch.AuthorizationDate != req.AuthorizationDate {
				t.Errorf("authorization_date %q, want %q", ch.AuthorizationDate, req.AuthorizationDate)
			}
		}
		// Without authorization_date the date is the creation date (spec 2.1).
		ch := create(t, c, validRequest("authdate-default"))
		if want := today.Format("2006-01-02"); ch.AuthorizationDate != want {
			t.Errorf("default authorization_date %q, want the creation date %s", ch.AuthorizationDate, want)
		}
		// Another key's clock did not move.
		if got := e.today(keyB); !got.Equal(start) {
			t.Errorf("keyB's clock is %s, want %s", got, start)
		}
	})
}

// TestPaymentLinkValidation: the fields of spec 2.2 are optional but typed
// and limited.
func TestPaymentLinkValidation(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		c := e.client(keyA)
		cases := []struct {
			name  string
			body  map[string]any
			field string
		}{
			{"empty", map[string]any{}, ""},
			{"amount 0.01", map[string]any{"amount": json.Number("0.01")}, ""},
			{"amount 0", map[string]any{"amount": json.Number("0")}, "amount"},
			{"amount negative", map[string]any{"amount": json.Number("-1")}, "amount"},
			{"memo 128", map[string]any{"memo": rep("m", 128)}, ""},
			{"memo 129", map[string]any{"memo": rep("m", 129)}, "memo"},
			{"thank_you_url not a URL", map[string]any{"thank_you_url": "not a url"}, "thank_you_url"},
			{"error_url not a URL", map[string]any{"error_url": "nowhere"}, "error_url"},
			{"recurring 2", map[string]any{"recurring": 2}, "recurring"},
			{"cycle year", map[string]any{"recurring": 1, "recurring_cycle": "year"}, "recurring_cycle"},
			{"cycle bi-weekly", map[string]any{"recurring": 1, "recurring_cycle": "bi-weekly"}, ""},
			{"installments -1", map[string]any{"recurring": 1, "recurring_cycle": "day", "recurring_installments": -1}, "recurring_installments"},
			{"start date not a date", map[string]any{"recurring": 1, "recurring_cycle": "day", "recurring_start_date": "soon"}, "recurring_start_date"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.raw(http.MethodPost, "/v1/paymentlink/create", keyA, tc.body)
				if tc.field != "" {
					rawErr(t, r, http.StatusBadRequest, tc.field)
				} else if r.status != http.StatusOK {
					t.Errorf("HTTP %d, want 200: %s", r.status, r.body)
				}
			})
		}
		// The same through the client, where it can express them.
		_, err := c.CreatePaymentLink(t.Context(), echeck.PaymentLinkRequest{Memo: rep("m", 129)})
		apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "memo")
		_, err = c.CreatePaymentLink(t.Context(), echeck.PaymentLinkRequest{ThankYouURL: "not a url"})
		apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "thank_you_url")
		_, err = c.CreatePaymentLink(t.Context(), echeck.PaymentLinkRequest{Recurring: true, RecurringCycle: "year"})
		apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "recurring_cycle")
		if _, err := c.CreatePaymentLink(t.Context(), echeck.PaymentLinkRequest{Amount: 1, Memo: rep("m", 128)}); err != nil {
			t.Errorf("payment link of 0.01 with a 128-character memo: %v", err)
		}
	})
}

// TestClientRefusals: input the client refuses before sending (no request
// reaches the sandbox), each paired with the same input sent raw, which the
// sandbox must refuse too.
func TestClientRefusals(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		c := e.client(keyA)
		ctx := t.Context()
		ch := create(t, c, validRequest("refusals"))
		zero := validRequest("refusals")
		zero.Amount = 0
		neg := validRequest("refusals")
		neg.Amount = -100

		cases := []struct {
			name   string
			call   func() error
			method string
			path   string
			body   any
			status int
			field  string
		}{
			{"create amount 0", func() error { _, err := c.CreateCheck(ctx, zero); return err },
				http.MethodPost, "/v1/check/create", wireWith("amount", json.Number("0")), 400, "amount"},
			{"create amount negative", func() error { _, err := c.CreateCheck(ctx, neg); return err },
				http.MethodPost, "/v1/check/create", wireWith("amount", json.Number("-1.00")), 400, "amount"},
			{"edit amount 0", func() error { _, err := c.EditCheck(ctx, ch.CheckID, zero); return err },
				http.MethodPost, "/v1/check/edit", wireWith("amount", json.Number("0"), "check_id", ch.CheckID, "number", ch.Number), 400, "amount"},
			{"bankinfo routing 8 digits", func() error { _, err := c.BankInfo(ctx, "99990000"); return err },
				http.MethodGet, "/v1/check/bankinfo?bank_routing=99990000", nil, 400, "bank_routing"},
			{"bankinfo routing 10 digits", func() error { _, err := c.BankInfo(ctx, "9999000010"); return err },
				http.MethodGet, "/v1/check/bankinfo?bank_routing=9999000010", nil, 400, "bank_routing"},
			{"bankinfo routing non-digits", func() error { _, err := c.BankInfo(ctx, "99990000x"); return err },
				http.MethodGet, "/v1/check/bankinfo?bank_routing=99990000x", nil, 400, "bank_routing"},
			{"bankinfo routing missing", func() error { _, err := c.BankInfo(ctx, ""); return err },
				http.MethodGet, "/v1/check/bankinfo", nil, 400, "bank_routing"},
			{"list from_date not a date", func() error { _, err := c.ListChecks(ctx, echeck.ListParams{FromDate: "2026-3-4"}); return err },
				http.MethodGet, "/v1/check/list?from_date=2026-3-4", nil, 400, "from_date"},
			{"list to_date not a date", func() error { _, err := c.ListChecks(ctx, echeck.ListParams{ToDate: "03/04/2026"}); return err },
				http.MethodGet, "/v1/check/list?to_date=03%2F04%2F2026", nil, 400, "to_date"},
			{"get check id with a slash", func() error { _, err := c.GetCheck(ctx, "../list"); return err },
				"", "", nil, 0, ""},
			{"delete check id empty", func() error { return c.DeleteCheck(ctx, "") },
				http.MethodDelete, "/v1/check/", nil, 404, ""},
			{"payment link amount negative", func() error {
				_, err := c.CreatePaymentLink(ctx, echeck.PaymentLinkRequest{Amount: -1})
				return err
			}, http.MethodPost, "/v1/paymentlink/create", map[string]any{"amount": json.Number("-0.01")}, 400, "amount"},
			{"payment link list with a label filter", func() error {
				_, err := c.ListPaymentLinks(ctx, echeck.ListParams{Label: "x"})
				return err
			}, "", "", nil, 0, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := e.requests()
				refused(t, e, before, tc.call())
				if tc.method == "" {
					return // nothing the sandbox could be asked
				}
				rawErr(t, e.raw(tc.method, tc.path, keyA, tc.body), tc.status, tc.field)
			})
		}
		if n := len(listByLabel(t, c, "refusals")); n != 1 {
			t.Errorf("%d checks labelled refusals, want only the first", n)
		}
		sameCheck(t, get(t, c, ch.CheckID), *ch)
	})
}

// wireWith is baseWire with the given fields replaced.
func wireWith(kv ...any) wire {
	w := baseWire()
	w["label"] = "refusals"
	for i := 0; i < len(kv); i += 2 {
		w[kv[i].(string)] = kv[i+1]
	}
	return w
}

// TestEditCheckID: check_id is 36 characters on edit (spec 4.1); an
// identifier of another length is a 400 naming it.
func TestEditCheckID(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		c := e.client(keyA)
		req := validRequest("editid")
		req.Number = "55"
		_, err := c.EditCheck(t.Context(), "abc", req)
		apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "check_id")
		_, err = c.EditCheck(t.Context(), strings.Repeat("a", 37), req)
		apiErr(t, err, http.StatusBadRequest, apiwire.Permanent, "check_id")
		rawErr(t, e.raw(http.MethodPost, "/v1/check/edit", keyA, wireWith("number", "55")), http.StatusBadRequest, "check_id")
	})
}
