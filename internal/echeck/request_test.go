package echeck

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// The hand-written mapping RequestOf and the request's wire form had
// before both were derived from payment.Fields, kept as the reference the
// derived ones must match byte for byte.

type refWire struct {
	Number                string      `json:"number,omitempty"`
	Amount                money.Cents `json:"amount"`
	Memo                  string      `json:"memo,omitempty"`
	Name                  string      `json:"name,omitempty"`
	Email                 string      `json:"email,omitempty"`
	AuthorizationDate     string      `json:"authorization_date,omitempty"`
	Label                 string      `json:"label,omitempty"`
	Phone                 string      `json:"phone,omitempty"`
	Address               string      `json:"address,omitempty"`
	City                  string      `json:"city,omitempty"`
	State                 string      `json:"state,omitempty"`
	Zip                   string      `json:"zip,omitempty"`
	BankAccount           string      `json:"bank_account,omitempty"`
	BankRouting           string      `json:"bank_routing,omitempty"`
	Token                 string      `json:"token,omitempty"`
	Store                 string      `json:"store,omitempty"`
	TypeInfo              string      `json:"type_info,omitempty"`
	Recurring             *int        `json:"recurring,omitempty"`
	RecurringCycle        string      `json:"recurring_cycle,omitempty"`
	RecurringStartDate    string      `json:"recurring_start_date,omitempty"`
	RecurringInstallments *int        `json:"recurring_installments,omitempty"`
	VerifyBeforeSave      bool        `json:"verify_before_save,omitempty"`
	FundConfirmation      bool        `json:"fund_confirmation,omitempty"`
}

func refWireOf(r CheckRequest) refWire {
	return refWire{
		Number: r.Number, Amount: r.Amount, Memo: r.Memo, Name: r.Name, Email: r.Email,
		AuthorizationDate: r.AuthorizationDate, Label: r.Label, Phone: r.Phone,
		Address: r.Address, City: r.City, State: r.State, Zip: r.Zip,
		BankAccount: r.BankAccount, BankRouting: r.BankRouting, Token: r.Token, Store: r.Store,
		TypeInfo: r.TypeInfo, Recurring: flag01(r.Recurring), RecurringCycle: r.RecurringCycle,
		RecurringStartDate: r.RecurringStartDate, RecurringInstallments: r.RecurringInstallments,
		VerifyBeforeSave: r.VerifyBeforeSave, FundConfirmation: r.FundConfirmation,
	}
}

func refRequestOf(row *payment.Row) CheckRequest {
	p := row.Payment
	req := CheckRequest{
		Number: row.Number, Label: row.Label, Amount: p.Amount,
		Memo: p.Memo, Name: p.Name, Email: p.Email, Phone: p.Phone,
		AuthorizationDate: p.AuthorizationDate,
		Address:           p.Address, City: p.City, State: p.State, Zip: p.Zip,
		BankAccount: p.BankAccount, BankRouting: p.BankRouting,
		Token: p.Token, Store: p.Store, TypeInfo: p.TypeInfo,
		VerifyBeforeSave: p.VerifyBeforeSave, FundConfirmation: p.FundConfirmation,
	}
	if p.Recurring {
		n := p.RecurringInstallments
		req.Recurring = true
		req.RecurringCycle = p.RecurringCycle
		req.RecurringStartDate = p.RecurringStartDate
		req.RecurringInstallments = &n
	}
	return req
}

func refCreateBody(r CheckRequest) ([]byte, error) { return json.Marshal(refWireOf(r)) }

func refEditBody(id string, r CheckRequest) ([]byte, error) {
	return json.Marshal(struct {
		CheckID string `json:"check_id"`
		refWire
	}{id, refWireOf(r)})
}

// fullPayment gives every field of a payment a value, text with characters
// JSON escapes.
func fullPayment() payment.Payment {
	var p payment.Payment
	for i, f := range payment.Fields {
		switch f.Kind {
		case payment.Text:
			*f.Text(&p) = f.Name + ` <&> "é" ` + string(rune('a'+i))
		case payment.Cents:
			*f.Cents(&p) = 123456
		case payment.Bool:
			*f.Bool(&p) = true
		case payment.Int:
			*f.Int(&p) = 7
		}
	}
	p.AccountLast4 = "0008"
	return p
}

func TestRequestOfMatchesTheHandWrittenMapping(t *testing.T) {
	full := fullPayment()
	once := full
	once.Recurring = false // the schedule is left set: RequestOf drops it
	indefinitely := full
	indefinitely.RecurringInstallments = 0
	for name, p := range map[string]payment.Payment{
		"full": full, "not recurring": once, "indefinitely": indefinitely, "zero": {},
	} {
		t.Run(name, func(t *testing.T) {
			row := &payment.Row{Payment: p, Label: "batchd-7-12", Number: "0001001"}
			got, want := RequestOf(row), refRequestOf(row)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("RequestOf\n got %+v\nwant %+v", got, want)
			}
			gotJSON, err := json.Marshal(checkRequestWire{r: &got})
			if err != nil {
				t.Fatal(err)
			}
			wantJSON, _ := refCreateBody(want)
			if !bytes.Equal(gotJSON, wantJSON) {
				t.Errorf("create body\n got %s\nwant %s", gotJSON, wantJSON)
			}
		})
	}
	for _, f := range payment.Fields {
		if f.Kind != payment.Cents && f.IsZero(&full) {
			t.Errorf("fullPayment leaves %s unset", f.Name)
		}
	}
}

// TestRequestBodiesMatchTheHandWrittenWire sends random requests, as a
// caller of CreateCheck and EditCheck may build them, through both.
func TestRequestBodiesMatchTheHandWrittenWire(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	texts := []string{"", "a", "1001", "<script>&amp;", "\"quoted\"\n\ttab", "García ☃", "\xff\xfe bad utf-8", "\u2028"}
	for range 2000 {
		var r CheckRequest
		rv := reflect.ValueOf(&r).Elem()
		for i := range rv.NumField() {
			v := rv.Field(i)
			switch v.Kind() {
			case reflect.String:
				v.SetString(texts[rng.IntN(len(texts))])
			case reflect.Bool:
				v.SetBool(rng.IntN(2) == 0)
			case reflect.Int64: // money.Cents
				v.SetInt(rng.Int64N(2_000_000) - 1_000_000)
			case reflect.Pointer:
				if rng.IntN(2) == 0 {
					n := rng.IntN(3)
					v.Set(reflect.ValueOf(&n))
				}
			default:
				t.Fatalf("CheckRequest field %s of kind %v", rv.Type().Field(i).Name, v.Kind())
			}
		}
		got, err := json.Marshal(checkRequestWire{r: &r})
		want, _ := refCreateBody(r)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("create body (err %v)\n got %s\nwant %s", err, got, want)
		}
		got, err = json.Marshal(checkRequestWire{r: &r, edit: true, checkID: "0f8e3a2c-1111-2222-3333-444455556666"})
		want, _ = refEditBody("0f8e3a2c-1111-2222-3333-444455556666", r)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("edit body (err %v)\n got %s\nwant %s", err, got, want)
		}
	}
}

// TestCheckRequestIsThePaymentsFields: every field of CheckRequest is a
// field of a payment, so none is left out of the wire.
func TestCheckRequestIsThePaymentsFields(t *testing.T) {
	mapped := map[int]bool{}
	for _, i := range requestFields {
		mapped[i] = true
	}
	rt := reflect.TypeFor[CheckRequest]()
	for i := range rt.NumField() {
		if !mapped[i] {
			t.Errorf("CheckRequest.%s is not a field of payment.Fields", rt.Field(i).Name)
		}
	}
}
