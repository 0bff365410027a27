package echeck

import (
	"bytes"
	"strconv"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/money"
)

// checkWire is a check as the service sends it, each member read by
// apiwire's lenient rule of its type; check applies Check's rules to it.
type checkWire struct {
	CheckID               apiwire.Val[string]      `json:"check_id"`
	Number                numberWire               `json:"number"`
	Amount                apiwire.Val[money.Cents] `json:"amount"`
	Label                 apiwire.Val[string]      `json:"label"`
	Status                apiwire.Val[string]      `json:"status"`
	LinkID                apiwire.Loose[string]    `json:"link_id"`
	Date                  apiwire.Loose[string]    `json:"date"`
	Memo                  apiwire.Loose[string]    `json:"memo"`
	Name                  apiwire.Loose[string]    `json:"name"`
	Email                 apiwire.Loose[string]    `json:"email"`
	Phone                 apiwire.Loose[string]    `json:"phone"`
	Address               apiwire.Loose[string]    `json:"address"`
	City                  apiwire.Loose[string]    `json:"city"`
	State                 apiwire.Loose[string]    `json:"state"`
	Zip                   apiwire.Loose[string]    `json:"zip"`
	AuthorizationDate     apiwire.Loose[string]    `json:"authorization_date"`
	BankAccount           apiwire.Loose[string]    `json:"bank_account"`
	BankRouting           apiwire.Loose[string]    `json:"bank_routing"`
	BankName              apiwire.Loose[string]    `json:"bank_name"`
	BankAddress           apiwire.Loose[string]    `json:"bank_address"`
	BankCity              apiwire.Loose[string]    `json:"bank_city"`
	BankState             apiwire.Loose[string]    `json:"bank_state"`
	BankZip               apiwire.Loose[string]    `json:"bank_zip"`
	Store                 apiwire.Loose[string]    `json:"store"`
	Recurring             apiwire.Loose[bool]      `json:"recurring"`
	RecurringCycle        apiwire.Loose[string]    `json:"recurring_cycle"`
	RecurringStartDate    apiwire.Loose[string]    `json:"recurring_start_date"`
	RecurringInstallments apiwire.Loose[int]       `json:"recurring_installments"`
	BasicVerification     apiwire.Obj[bvWire]      `json:"basic_verification"`
	FundsConfirmation     apiwire.Obj[fcWire]      `json:"funds_confirmation"`
	FundConfirmation      apiwire.Obj[fcWire]      `json:"fund_confirmation"` // a spelling some clients show
}

// bvWire is a basic verification as sent; every member is loose.
type bvWire struct {
	Risk         apiwire.Loose[string] `json:"risk_bv"`
	Pass         apiwire.Loose[bool]   `json:"pass_bv"`
	Code         apiwire.Loose[string] `json:"code_bv"`
	Description  apiwire.Loose[string] `json:"description_bv"`
	Verification apiwire.Loose[string] `json:"verification_bv"`
}

// fcWire is a funds confirmation as sent; every member is loose.
type fcWire struct {
	Verification apiwire.Loose[string] `json:"verification_fc"`
	Pass         apiwire.Loose[bool]   `json:"pass_fc"`
	Description  apiwire.Loose[string] `json:"description_fc"`
}

// numberWire is the check number's text, and whether it came as a JSON
// number (see check).
type numberWire struct {
	s   apiwire.Val[string]
	num bool
}

// UnmarshalJSON reads b as text and notes whether it is a JSON number.
func (n *numberWire) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	n.num = len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9')
	return n.s.UnmarshalJSON(b)
}

// check applies Check's rules: the members batchd acts on are strict, in
// this order (the first unreadable one is the error); the rest are loose.
// The check number is text as sent (leading zeros kept: it is an
// identity), but a JSON number that is whole and not negative is plain
// digits (a service that keeps it as an integer may send 1001.0 or 1.001e3).
func (w *checkWire) check() (Check, error) {
	var err error
	c := Check{CheckID: w.CheckID.Strict("check_id", &err), Number: w.Number.s.Strict("number", &err),
		Amount: w.Amount.Strict("amount", &err), Label: w.Label.Strict("label", &err), Status: w.Status.Strict("status", &err),
		Date: w.Date.V, Memo: w.Memo.V, Name: w.Name.V, Email: w.Email.V, Phone: w.Phone.V,
		Address: w.Address.V, City: w.City.V, State: w.State.V, Zip: w.Zip.V,
		AuthorizationDate: w.AuthorizationDate.V, BankAccount: maskAccount(w.BankAccount.V),
		BankRouting: w.BankRouting.V, BankName: w.BankName.V, BankAddress: w.BankAddress.V,
		BankCity: w.BankCity.V, BankState: w.BankState.V, BankZip: w.BankZip.V, Store: w.Store.V,
		Recurring: w.Recurring.V, RecurringCycle: w.RecurringCycle.V,
		RecurringStartDate: w.RecurringStartDate.V, RecurringInstallments: w.RecurringInstallments.V,
		LinkID: w.LinkID.V,
	}
	if v, e := apiwire.ParseInteger(c.Number); w.Number.num && e == nil && v >= 0 {
		c.Number = strconv.FormatInt(v, 10)
	}
	if bv := w.BasicVerification; bv.OK {
		c.BasicVerification = &BasicVerification{Risk: bv.V.Risk.V, Pass: bv.V.Pass.V, Code: bv.V.Code.V,
			Description: bv.V.Description.V, Verification: bv.V.Verification.V}
	}
	if fc := w.FundsConfirmation; fc.OK || w.FundConfirmation.OK {
		if !fc.OK {
			fc = w.FundConfirmation
		}
		c.FundsConfirmation = &FundsConfirmation{Verification: fc.V.Verification.V, Pass: fc.V.Pass.V,
			Description: fc.V.Description.V}
	}
	return c, err
}

// checkOf decodes a check leniently; see Check.
func checkOf(b []byte) (Check, error) {
	var w checkWire
	if err := apiwire.Decode(b, &w); err != nil {
		return Check{}, err
	}
	return w.check()
}

// UnmarshalJSON decodes a check leniently; see Check.
func (c *Check) UnmarshalJSON(b []byte) error {
	v, err := checkOf(b)
	if err == nil {
		*c = v
	}
	return err
}
