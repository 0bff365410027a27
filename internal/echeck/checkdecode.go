package echeck

import (
	"bytes"
	"github.com/batchd/batchd/internal/apiwire"
	"strconv"
	"strings"

	"github.com/batchd/batchd/internal/redact"
)

// A check is decoded by collecting the raw value of each member the client
// reads (checkRaw) and then reading those values with the lenient rules of
// internal/apiwire. The values come either from an object map (checkFrom) or
// straight from the JSON text (checkFromJSON), which saves a list page a
// map per check; both end in checkRaw.check, so the rules are the same.

// Indices of the check members the client reads, in checkMembers.
const (
	ckCheckID = iota
	ckNumber
	ckAmount
	ckLabel
	ckStatus
	ckDate
	ckMemo
	ckName
	ckEmail
	ckPhone
	ckAddress
	ckCity
	ckState
	ckZip
	ckAuthorizationDate
	ckBankAccount
	ckBankRouting
	ckBankName
	ckBankAddress
	ckBankCity
	ckBankState
	ckBankZip
	ckRecurring
	ckRecurringCycle
	ckRecurringStartDate
	ckRecurringInstallments
	ckBasicVerification
	ckFundsConfirmation
	ckFundConfirmation // a spelling of funds_confirmation some clients show
	ckCount
)

// checkMembers names the members, by index; it is never written.
// checkMember must agree with it (TestCheckMembersAgree).
var checkMembers = [ckCount]string{
	"check_id", "number", "amount", "label", "status", "date", "memo", "name", "email",
	"phone", "address", "city", "state", "zip", "authorization_date", "bank_account",
	"bank_routing", "bank_name", "bank_address", "bank_city", "bank_state", "bank_zip",
	"recurring", "recurring_cycle", "recurring_start_date", "recurring_installments",
	"basic_verification", "funds_confirmation", "fund_confirmation",
}

// checkMember returns the index of a member key in checkMembers, or -1.
// It is a switch rather than a map so that a lookup neither hashes nor
// allocates.
func checkMember(k []byte) int {
	switch string(k) {
	case "check_id":
		return ckCheckID
	case "number":
		return ckNumber
	case "amount":
		return ckAmount
	case "label":
		return ckLabel
	case "status":
		return ckStatus
	case "date":
		return ckDate
	case "memo":
		return ckMemo
	case "name":
		return ckName
	case "email":
		return ckEmail
	case "phone":
		return ckPhone
	case "address":
		return ckAddress
	case "city":
		return ckCity
	case "state":
		return ckState
	case "zip":
		return ckZip
	case "authorization_date":
		return ckAuthorizationDate
	case "bank_account":
		return ckBankAccount
	case "bank_routing":
		return ckBankRouting
	case "bank_name":
		return ckBankName
	case "bank_address":
		return ckBankAddress
	case "bank_city":
		return ckBankCity
	case "bank_state":
		return ckBankState
	case "bank_zip":
		return ckBankZip
	case "recurring":
		return ckRecurring
	case "recurring_cycle":
		return ckRecurringCycle
	case "recurring_start_date":
		return ckRecurringStartDate
	case "recurring_installments":
		return ckRecurringInstallments
	case "basic_verification":
		return ckBasicVerification
	case "funds_confirmation":
		return ckFundsConfirmation
	case "fund_confirmation":
		return ckFundConfirmation
	}
	return -1
}

// checkRaw holds the raw value of each member of checkMembers; nil is absent.
type checkRaw [ckCount][]byte

// UnmarshalJSON decodes a check leniently; see Check.
func (c *Check) UnmarshalJSON(b []byte) error {
	b, err := apiwire.ValidObject(b)
	if err != nil {
		return err
	}
	var r checkRaw
	if _, err := apiwire.Pick(b, checkMember, r[:]); err != nil {
		return err
	}
	v, err := r.check()
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// checkFrom reads a check from its object map.
func checkFrom(m object) (Check, error) {
	var r checkRaw
	for i, k := range checkMembers {
		r[i] = m[k]
	}
	return r.check()
}

// checkFromJSON reads a check from raw, a value of a valid document. ok is
// false, as apiwire.ObjectOf's would be, when raw is not a non-empty object.
func checkFromJSON(raw []byte) (c Check, ok bool, err error) {
	var r checkRaw
	if n, err := apiwire.Pick(raw, checkMember, r[:]); err != nil || n == 0 {
		return Check{}, false, nil
	}
	c, err = r.check()
	return c, true, err
}

// check applies Check's rules: the members batchd acts on are strict, in
// this order (the first unreadable one is the error); the rest are loose.
func (r *checkRaw) check() (Check, error) {
	var e apiwire.FirstError
	strict := func(i int) string {
		s, err := apiwire.StrictText(checkMembers[i], r[i])
		e.Note(err)
		return s
	}
	var err error
	c := Check{CheckID: strict(ckCheckID), Number: numberText(strict(ckNumber), r[ckNumber])}
	c.Amount, err = apiwire.StrictCents(checkMembers[ckAmount], r[ckAmount])
	e.Note(err)
	c.Label, c.Status = strict(ckLabel), strict(ckStatus)

	c.Date, c.Memo, c.Name, c.Email = apiwire.LooseText(r[ckDate]), apiwire.LooseText(r[ckMemo]), apiwire.LooseText(r[ckName]), apiwire.LooseText(r[ckEmail])
	c.Phone, c.Address, c.City = apiwire.LooseText(r[ckPhone]), apiwire.LooseText(r[ckAddress]), apiwire.LooseText(r[ckCity])
	c.State, c.Zip, c.AuthorizationDate = apiwire.LooseText(r[ckState]), apiwire.LooseText(r[ckZip]), apiwire.LooseText(r[ckAuthorizationDate])
	c.BankAccount, c.BankRouting = maskAccount(apiwire.LooseText(r[ckBankAccount])), apiwire.LooseText(r[ckBankRouting])
	c.BankName, c.BankAddress, c.BankCity = apiwire.LooseText(r[ckBankName]), apiwire.LooseText(r[ckBankAddress]), apiwire.LooseText(r[ckBankCity])
	c.BankState, c.BankZip = apiwire.LooseText(r[ckBankState]), apiwire.LooseText(r[ckBankZip])
	c.Recurring, c.RecurringCycle = apiwire.LooseBool(r[ckRecurring]), apiwire.LooseText(r[ckRecurringCycle])
	c.RecurringStartDate, c.RecurringInstallments = apiwire.LooseText(r[ckRecurringStartDate]), apiwire.LooseInt(r[ckRecurringInstallments])

	if v, ok := basicVerificationOf(r[ckBasicVerification]); ok {
		c.BasicVerification = &v
	}
	fc, ok := fundsConfirmationOf(r[ckFundsConfirmation])
	if !ok {
		fc, ok = fundsConfirmationOf(r[ckFundConfirmation])
	}
	if ok {
		c.FundsConfirmation = &fc
	}
	return c, e.Err
}

// UnmarshalJSON decodes leniently: pass_bv may be 0/1, "1" or true.
func (v *BasicVerification) UnmarshalJSON(b []byte) error {
	b, err := apiwire.ValidObject(b)
	if err != nil {
		return err
	}
	bv, _ := basicVerificationOf(b)
	*v = bv
	return nil
}

// basicVerificationOf reads raw when it is a non-empty object (as
// apiwire.ObjectOf tells); ok is false otherwise. Every member is loose.
func basicVerificationOf(raw []byte) (v BasicVerification, ok bool) {
	var r [5][]byte
	index := func(k []byte) int {
		switch string(k) {
		case "risk_bv":
			return 0
		case "pass_bv":
			return 1
		case "code_bv":
			return 2
		case "description_bv":
			return 3
		case "verification_bv":
			return 4
		}
		return -1
	}
	if raw == nil {
		return v, false
	}
	if n, err := apiwire.Pick(raw, index, r[:]); err != nil || n == 0 {
		return v, false
	}
	return BasicVerification{Risk: apiwire.LooseText(r[0]), Pass: apiwire.LooseBool(r[1]), Code: apiwire.LooseText(r[2]),
		Description: apiwire.LooseText(r[3]), Verification: apiwire.LooseText(r[4])}, true
}

// UnmarshalJSON decodes leniently: pass_fc may be 0/1, "1" or true.
func (v *FundsConfirmation) UnmarshalJSON(b []byte) error {
	b, err := apiwire.ValidObject(b)
	if err != nil {
		return err
	}
	fc, _ := fundsConfirmationOf(b)
	*v = fc
	return nil
}

// fundsConfirmationOf reads raw when it is a non-empty object (as
// apiwire.ObjectOf tells); ok is false otherwise. Every member is loose.
func fundsConfirmationOf(raw []byte) (v FundsConfirmation, ok bool) {
	var r [3][]byte
	index := func(k []byte) int {
		switch string(k) {
		case "verification_fc":
			return 0
		case "pass_fc":
			return 1
		case "description_fc":
			return 2
		}
		return -1
	}
	if raw == nil {
		return v, false
	}
	if n, err := apiwire.Pick(raw, index, r[:]); err != nil || n == 0 {
		return v, false
	}
	return FundsConfirmation{Verification: apiwire.LooseText(r[0]), Pass: apiwire.LooseBool(r[1]),
		Description: apiwire.LooseText(r[2])}, true
}

// numberText is the check number s read from raw. A service that keeps
// the number as an integer may send it as a JSON number, also in a float
// form (1001.0, 1.001e3); such a number that is a whole number, not
// negative, is written as plain digits. A string is kept as sent, leading
// zeros and all: the number is an identity, and comparing "0042" with
// "42" is the caller's decision, not the decoder's.
func numberText(s string, raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return s
	}
	if n, err := apiwire.ParseInteger(s); err == nil && n >= 0 {
		return strconv.FormatInt(n, 10)
	}
	return s
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
