package echeck

import (
	"bytes"
	"strconv"

	"github.com/batchd/batchd/internal/apiwire"
)

// checkWire is a check as the service sends it, each member read by one of
// apiwire's lenient types; check applies Check's rules to it.
type checkWire struct {
	CheckID               apiwire.StrictStr   `json:"check_id"`
	Number                numberWire          `json:"number"`
	Amount                apiwire.Amount      `json:"amount"`
	Label                 apiwire.StrictStr   `json:"label"`
	Status                apiwire.StrictStr   `json:"status"`
	Date                  apiwire.Str         `json:"date"`
	Memo                  apiwire.Str         `json:"memo"`
	Name                  apiwire.Str         `json:"name"`
	Email                 apiwire.Str         `json:"email"`
	Phone                 apiwire.Str         `json:"phone"`
	Address               apiwire.Str         `json:"address"`
	City                  apiwire.Str         `json:"city"`
	State                 apiwire.Str         `json:"state"`
	Zip                   apiwire.Str         `json:"zip"`
	AuthorizationDate     apiwire.Str         `json:"authorization_date"`
	BankAccount           apiwire.Str         `json:"bank_account"`
	BankRouting           apiwire.Str         `json:"bank_routing"`
	BankName              apiwire.Str         `json:"bank_name"`
	BankAddress           apiwire.Str         `json:"bank_address"`
	BankCity              apiwire.Str         `json:"bank_city"`
	BankState             apiwire.Str         `json:"bank_state"`
	BankZip               apiwire.Str         `json:"bank_zip"`
	Recurring             apiwire.Flag        `json:"recurring"`
	RecurringCycle        apiwire.Str         `json:"recurring_cycle"`
	RecurringStartDate    apiwire.Str         `json:"recurring_start_date"`
	RecurringInstallments apiwire.Int         `json:"recurring_installments"`
	BasicVerification     apiwire.Obj[bvWire] `json:"basic_verification"`
	FundsConfirmation     apiwire.Obj[fcWire] `json:"funds_confirmation"`
	FundConfirmation      apiwire.Obj[fcWire] `json:"fund_confirmation"` // a spelling some clients show
}

// bvWire is a basic verification as sent; every member is loose.
type bvWire struct {
	Risk         apiwire.Str  `json:"risk_bv"`
	Pass         apiwire.Flag `json:"pass_bv"`
	Code         apiwire.Str  `json:"code_bv"`
	Description  apiwire.Str  `json:"description_bv"`
	Verification apiwire.Str  `json:"verification_bv"`
}

// fcWire is a funds confirmation as sent; every member is loose.
type fcWire struct {
	Verification apiwire.Str  `json:"verification_fc"`
	Pass         apiwire.Flag `json:"pass_fc"`
	Description  apiwire.Str  `json:"description_fc"`
}

// numberWire is the check number's text, and whether it came as a JSON
// number (see numberText).
type numberWire struct {
	s   apiwire.StrictStr
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
func (w *checkWire) check() (Check, error) {
	var e apiwire.FirstError
	c := Check{CheckID: w.CheckID.Strict("check_id", &e), Number: w.Number.text(&e),
		Amount: w.Amount.Strict("amount", &e), Label: w.Label.Strict("label", &e), Status: w.Status.Strict("status", &e),
		Date: string(w.Date), Memo: string(w.Memo), Name: string(w.Name), Email: string(w.Email), Phone: string(w.Phone),
		Address: string(w.Address), City: string(w.City), State: string(w.State), Zip: string(w.Zip),
		AuthorizationDate: string(w.AuthorizationDate), BankAccount: maskAccount(string(w.BankAccount)),
		BankRouting: string(w.BankRouting), BankName: string(w.BankName), BankAddress: string(w.BankAddress),
		BankCity: string(w.BankCity), BankState: string(w.BankState), BankZip: string(w.BankZip),
		Recurring: bool(w.Recurring), RecurringCycle: string(w.RecurringCycle),
		RecurringStartDate: string(w.RecurringStartDate), RecurringInstallments: w.RecurringInstallments.V,
	}
	if bv := w.BasicVerification; bv.OK {
		v := bv.V.value()
		c.BasicVerification = &v
	}
	fc := w.FundsConfirmation
	if !fc.OK {
		fc = w.FundConfirmation
	}
	if fc.OK {
		v := fc.V.value()
		c.FundsConfirmation = &v
	}
	return c, e.Err
}

func (w *bvWire) value() BasicVerification {
	return BasicVerification{Risk: string(w.Risk), Pass: bool(w.Pass), Code: string(w.Code),
		Description: string(w.Description), Verification: string(w.Verification)}
}

func (w *fcWire) value() FundsConfirmation {
	return FundsConfirmation{Verification: string(w.Verification), Pass: bool(w.Pass), Description: string(w.Description)}
}

// checkFrom reads a check from its object map (a single check's answer).
func checkFrom(m object) (Check, error) {
	var w checkWire
	if err := apiwire.FromObject(m, &w); err != nil {
		return Check{}, err
	}
	return w.check()
}

// UnmarshalJSON decodes a check leniently; see Check.
func (c *Check) UnmarshalJSON(b []byte) error {
	var w checkWire
	if err := apiwire.Decode(b, &w); err != nil {
		return err
	}
	v, err := w.check()
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// UnmarshalJSON decodes leniently: pass_bv may be 0/1, "1" or true.
func (v *BasicVerification) UnmarshalJSON(b []byte) error {
	var w bvWire
	if err := apiwire.Decode(b, &w); err != nil {
		return err
	}
	*v = w.value()
	return nil
}

// UnmarshalJSON decodes leniently: pass_fc may be 0/1, "1" or true.
func (v *FundsConfirmation) UnmarshalJSON(b []byte) error {
	var w fcWire
	if err := apiwire.Decode(b, &w); err != nil {
		return err
	}
	*v = w.value()
	return nil
}

// text is the check number: a string as sent, leading zeros and all (the
// number is an identity; comparing "0042" with "42" is the caller's
// decision), and a JSON number that is a whole number, not negative, as
// plain digits (a service that keeps the number as an integer may send
// 1001.0 or 1.001e3).
func (n numberWire) text(e *apiwire.FirstError) string {
	s := n.s.Strict("number", e)
	if v, err := apiwire.ParseInteger(s); n.num && err == nil && v >= 0 {
		return strconv.FormatInt(v, 10)
	}
	return s
}
