package echeck

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
)

// CheckRequest holds the fields of a check create or edit (spec 2.1).
// A zero string, false or nil is not sent, so the service applies its
// default. Amount is always sent, as an exact JSON number (1234.56).
// Either BankAccount and BankRouting, or Token and Store, identify the
// account; the service enforces that rule.
type CheckRequest struct {
	Number            string // digits, 1 to 10; the service fills it in when empty
	Amount            money.Cents
	Memo              string
	Name              string
	Email             string
	AuthorizationDate string // YYYY-MM-DD
	Label             string
	Phone             string
	Address           string
	City              string
	State             string
	Zip               string
	BankAccount       string
	BankRouting       string
	Token             string
	Store             string
	TypeInfo          string
	// Recurring is sent as recurring=1; false sends nothing (not recurring).
	Recurring          bool
	RecurringCycle     string // day, week, bi-weekly, month
	RecurringStartDate string // YYYY-MM-DD; empty starts on the creation day
	// RecurringInstallments is a pointer because 0 means "indefinitely".
	RecurringInstallments *int
	VerifyBeforeSave      bool
	FundConfirmation      bool
}

// checkRequestWire is a check create or edit as the service reads it: a
// JSON object of the payment's fields (payment.Fields), in spec order,
// after check_id for an edit. The amount is always sent; any other field
// only when given: a text not empty, a flag true, a number not nil. The
// recurring flag is sent as the number 1 (spec 2.1: "enum 0, 1"), other
// flags as true.
type checkRequestWire struct {
	r       *CheckRequest
	edit    bool   // an edit, of check checkID
	checkID string // sent first, for an edit
}

// sentAsNumber are the flags the service reads as a number.
var sentAsNumber = map[string]bool{"recurring": true}

// MarshalJSON writes the object.
func (w checkRequestWire) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	member := func(name string, v any) error {
		key, err := json.Marshal(name)
		if err != nil {
			return err
		}
		val, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(append(append(b, key...), ':'), val...)
		return nil
	}
	if w.edit {
		if err := member("check_id", w.checkID); err != nil {
			return nil, err
		}
	}
	rv := reflect.ValueOf(w.r).Elem()
	for i, f := range payment.Fields {
		v := rv.Field(requestFields[i])
		if v.IsZero() && f.Kind != payment.Cents {
			continue
		}
		val := v.Interface()
		if f.Kind == payment.Bool && sentAsNumber[f.Name] {
			val = 1
		}
		if err := member(f.Name, val); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// requestFields maps payment.Fields to CheckRequest's fields by position:
// CheckRequest has a field for each field of a payment, under the Go name
// payment.Payment gives it, of the same type but that a number is a
// pointer (nil is "not sent").
var requestFields = func() []int {
	types := map[payment.Kind]reflect.Type{
		payment.Text: reflect.TypeFor[string](), payment.Cents: reflect.TypeFor[money.Cents](),
		payment.Bool: reflect.TypeFor[bool](), payment.Int: reflect.TypeFor[*int](),
	}
	pt, rt := reflect.TypeFor[payment.Payment](), reflect.TypeFor[CheckRequest]()
	goName := make(map[string]string, pt.NumField()) // JSON name -> Go name, in Payment
	for i := range pt.NumField() {
		name, _, _ := strings.Cut(pt.Field(i).Tag.Get("json"), ",")
		goName[name] = pt.Field(i).Name
	}
	out := make([]int, len(payment.Fields))
	for i, f := range payment.Fields {
		sf, ok := rt.FieldByName(goName[f.Name])
		if !ok || len(sf.Index) != 1 || sf.Type != types[f.Kind] {
			panic(fmt.Sprintf("echeck: CheckRequest needs a field %s of type %v, for the payment's field %s",
				goName[f.Name], types[f.Kind], f.Name))
		}
		out[i] = sf.Index[0]
	}
	return out
}()

// flag01 encodes a true flag as the number 1, the spec's "enum 0, 1".
func flag01(b bool) *int {
	if !b {
		return nil
	}
	one := 1
	return &one
}

// Check is a check as the service returns it. It decodes leniently:
// unknown fields are ignored, numbers may arrive as strings and strings as
// numbers. CheckID, Number, Amount, Label and Status, which batchd acts on,
// must be readable or the decoding fails; any other field of an unexpected
// type is left empty. It encodes back to the service's field names, so a
// stored Check decodes to the same value.
type Check struct {
	CheckID           string      `json:"check_id"`
	Date              string      `json:"date,omitempty"` // creation time, "YYYY-MM-DD HH:MM:SS"
	Number            string      `json:"number,omitempty"`
	Amount            money.Cents `json:"amount"`
	Memo              string      `json:"memo,omitempty"`
	Name              string      `json:"name,omitempty"`
	Email             string      `json:"email,omitempty"`
	Phone             string      `json:"phone,omitempty"`
	Address           string      `json:"address,omitempty"`
	City              string      `json:"city,omitempty"`
	State             string      `json:"state,omitempty"`
	Zip               string      `json:"zip,omitempty"`
	Label             string      `json:"label,omitempty"`
	AuthorizationDate string      `json:"authorization_date,omitempty"`
	Status            string      `json:"status,omitempty"` // in_process, in_review, printed, deposited, failed, void, deleted
	// LinkID is the checkout token of the payment link the check was paid
	// through, "" for a check created by the API (an assumption: the spec
	// names the check list's link_id filter but not the field).
	LinkID string `json:"link_id,omitempty"`
	// BankAccount is masked: the service masks it, and a value that still
	// shows more than four digits is masked again with redact.Account.
	BankAccount string `json:"bank_account,omitempty"`
	BankRouting string `json:"bank_routing,omitempty"`
	BankName    string `json:"bank_name,omitempty"`
	BankAddress string `json:"bank_address,omitempty"`
	BankCity    string `json:"bank_city,omitempty"`
	BankState   string `json:"bank_state,omitempty"`
	BankZip     string `json:"bank_zip,omitempty"`
	// Store is the store of the token the check was drawn by (spec
	// §2.1), "" for a check given routing and account.
	Store                 string             `json:"store,omitempty"`
	Recurring             bool               `json:"recurring,omitempty"`
	RecurringCycle        string             `json:"recurring_cycle,omitempty"`
	RecurringStartDate    string             `json:"recurring_start_date,omitempty"`
	RecurringInstallments int                `json:"recurring_installments,omitempty"`
	BasicVerification     *BasicVerification `json:"basic_verification,omitempty"`
	FundsConfirmation     *FundsConfirmation `json:"funds_confirmation,omitempty"`
}

// BasicVerification is the result of verify_before_save.
type BasicVerification struct {
	Risk         string `json:"risk_bv,omitempty"` // Pass, Fail, Risky
	Pass         bool   `json:"pass_bv"`
	Code         string `json:"code_bv,omitempty"` // such as RT01
	Description  string `json:"description_bv,omitempty"`
	Verification string `json:"verification_bv,omitempty"`
}

// FundsConfirmation is the result of fund_confirmation.
type FundsConfirmation struct {
	Verification string `json:"verification_fc,omitempty"` // SufficientFunds, InsufficientFunds, ...
	Pass         bool   `json:"pass_fc"`
	Description  string `json:"description_fc,omitempty"`
}

// CreateCheck creates one check. On success the Check carries the new
// CheckID. An error whose class is Ambiguous means the check may exist: look
// it up (by Label and Number) before creating it again.
func (c *Client) CreateCheck(ctx context.Context, r CheckRequest) (*Check, error) {
	k := apiwire.Call{Op: OpCheckCreate, Method: "POST", Path: "/v1/check/create", Body: checkRequestWire{r: &r},
		Effect: true, Result: "check", Accounts: []string{r.BankAccount, r.Token}}
	if r.Amount <= 0 {
		return nil, c.core.Refuse(k, fmt.Sprintf("not sent: amount %s is not positive", r.Amount), nil)
	}
	return apiwire.About(ctx, c.core, k, checkAnswer, "")
}

// GetCheck fetches one check by its identifier.
func (c *Client) GetCheck(ctx context.Context, id string) (*Check, error) {
	k := apiwire.Call{Op: OpCheckGet, Method: "GET", Path: "/v1/check/" + url.PathEscape(id), Result: "check"}
	if err := apiwire.ValidID(id); err != nil {
		return nil, c.core.Refuse(k, "not sent: check id", err)
	}
	return apiwire.About(ctx, c.core, k, checkAnswer, id)
}

// EditCheck replaces the fields of check id (only a check in_process can be
// edited). The request sends check_id with r's fields. It is not a create:
// sending the same edit twice leaves the same check, so a lost answer is
// Retryable.
func (c *Client) EditCheck(ctx context.Context, id string, r CheckRequest) (*Check, error) {
	k := apiwire.Call{Op: OpCheckEdit, Method: "POST", Path: "/v1/check/edit", Body: checkRequestWire{r: &r, edit: true, checkID: id},
		Result: "check", Accounts: []string{r.BankAccount, r.Token}}
	if err := apiwire.ValidID(id); err != nil {
		return nil, c.core.Refuse(k, "not sent: check id", err)
	}
	if r.Amount <= 0 {
		return nil, c.core.Refuse(k, fmt.Sprintf("not sent: amount %s is not positive", r.Amount), nil)
	}
	return apiwire.About(ctx, c.core, k, checkAnswer, id)
}

// DeleteCheck voids check id (only a check in_process can be voided). A
// lost answer is Retryable; a second delete of a voided check is refused by
// the service, which the caller should then confirm with GetCheck.
func (c *Client) DeleteCheck(ctx context.Context, id string) error {
	k := apiwire.Call{Op: OpCheckDelete, Method: "DELETE", Path: "/v1/check/" + url.PathEscape(id)}
	if err := apiwire.ValidID(id); err != nil {
		return c.core.Refuse(k, "not sent: check id", err)
	}
	_, err := c.core.Do(ctx, k)
	return err
}

// checkAnswer reads the check an answer is about (apiwire.About).
var checkAnswer = apiwire.Subject[Check]{What: "check", Field: "check_id",
	Read: func(a apiwire.Answer) (Check, string, error) {
		ch, err := checkOf(envelopeOf(a, "check", "check_id"))
		return ch, ch.CheckID, err
	}}

// envelopeOf returns the object under key (the documented envelope), or,
// when there is none, the whole answer if it has idField (some services
// answer with the bare object), or the object under "data".
func envelopeOf(a apiwire.Answer, key, idField string) []byte {
	if _, ok := a.Object[idField]; !apiwire.IsObject(a.Object[key]) && ok {
		return a.Body
	}
	for _, k := range []string{key, "data"} {
		if apiwire.IsObject(a.Object[k]) {
			return a.Object[k]
		}
	}
	return []byte("{}")
}

// firstText returns the first non-empty text among the spellings keys of
// one member of m; an unreadable value counts as empty.
func firstText(m object, keys ...string) string {
	for _, k := range keys {
		if s := apiwire.LooseText(m[k]); s != "" {
			return s
		}
	}
	return ""
}

// maskAccount keeps a masked account number as the service wrote it, and
// masks one again when it shows more than four digits, or more digits
// than mask characters. Public clients show the service's mask as first
// digit, dots, last three ("1..........876", the account's length): for
// an account of 4 to 7 digits that shows most or all of it.
func maskAccount(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	if n <= 4 && 2*n <= len(s) {
		return s
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
	return redact.Account(digits)
}
