package sandbox

import (
	"time"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/redact"
)

// Check status values, as public clients show them.
const (
	statusInProcess = "in_process"
	statusPrinted   = "printed"
	statusDeposited = "deposited"
	statusFailed    = "failed"
	statusVoid      = "void"
)

// timeLayout is the wire form of creation times: sandbox clock, UTC.
const timeLayout = "2006-01-02 15:04:05"

// checkInput is a validated create or edit request, with a token already
// resolved to its account.
type checkInput struct {
	CheckID              string // edit only
	Number               string // "" on create: assigned automatically
	Amount               money.Cents
	Memo, Name, Email    string
	Phone, Address, City string
	State, Zip, Label    string
	TypeInfo             string
	AuthDate             string // YYYY-MM-DD; "" means the creation date
	Routing, Account     string // from the request or from the token
	Token, Store         string
	Recurring            recurringView
	Verify, Fund         bool
}

// check is one stored check. It is guarded by its key's mutex.
type check struct {
	seq     int64
	id      string
	created time.Time // sandbox clock at creation, UTC
	due     time.Time // when in_process moves on to printed or failed
	status  string
	in      checkInput
	verdict verdict
	verify  bool // basic_verification was asked at create or an edit
	fund    bool // funds_confirmation was asked at create or an edit
	linkID  string
}

// checkView is the JSON form of a check, as in the create, get, edit and
// list answers.
type checkView struct {
	CheckID           string `json:"check_id"`
	Date              string `json:"date"`
	Number            string `json:"number"`
	Amount            amount `json:"amount"`
	Memo              string `json:"memo"`
	Name              string `json:"name"`
	Email             string `json:"email"`
	Phone             string `json:"phone"`
	Address           string `json:"address"`
	City              string `json:"city"`
	State             string `json:"state"`
	Zip               string `json:"zip"`
	Label             string `json:"label"`
	TypeInfo          string `json:"type_info"`
	AuthorizationDate string `json:"authorization_date"`
	Status            string `json:"status"`
	BankAccount       string `json:"bank_account"`
	BankRouting       string `json:"bank_routing"`
	BankName          string `json:"bank_name"`
	BankAddress       string `json:"bank_address"`
	BankCity          string `json:"bank_city"`
	BankState         string `json:"bank_state"`
	BankZip           string `json:"bank_zip"`
	Store             string `json:"store"`
	LinkID            string `json:"link_id"`
	recurringView
	BasicVerification *basicVerification `json:"basic_verification,omitempty"`
	FundsConfirmation *fundsConfirmation `json:"funds_confirmation,omitempty"`
}

// recurringView is the recurring fields of a check and of a payment link
// (spec 2.1; 2.2 has them "as for checks"), as read and as answered: a
// cycle or start date not given is null (a NULL start means the creation
// day).
type recurringView struct {
	Recurring             int64   `json:"recurring"`
	RecurringCycle        *string `json:"recurring_cycle"`
	RecurringStartDate    *string `json:"recurring_start_date"`
	RecurringInstallments int64   `json:"recurring_installments"`
}

// basicVerification is the verify_before_save result.
type basicVerification struct {
	Risk         string `json:"risk_bv"`
	Pass         int    `json:"pass_bv"`
	Code         string `json:"code_bv"`
	Description  string `json:"description_bv"`
	Verification string `json:"verification_bv"`
}

// fundsConfirmation is the fund_confirmation result.
type fundsConfirmation struct {
	Verification string `json:"verification_fc"`
	Pass         int    `json:"pass_fc"`
	Description  string `json:"description_fc"`
}

// checkEnvelope answers create, get and edit.
type checkEnvelope struct {
	okBody
	Check checkView `json:"check"`
}

// view renders c for the wire as the exact mode writes it. The account
// number is masked. Answers use Server.render, which applies the quirks.
func (c *check) view() checkView {
	in := &c.in
	b, _ := lookupBank(in.Routing)
	v := checkView{
		CheckID: c.id, Date: c.created.Format(timeLayout), Number: in.Number, Amount: amount{c: in.Amount},
		Memo: in.Memo, Name: in.Name, Email: in.Email, Phone: in.Phone,
		Address: in.Address, City: in.City, State: in.State, Zip: in.Zip,
		Label: in.Label, TypeInfo: in.TypeInfo, AuthorizationDate: in.AuthDate, Status: c.status,
		BankAccount: redact.Account(in.Account), BankRouting: in.Routing,
		BankName: b.Name, BankAddress: b.Address, BankCity: b.City, BankState: b.State, BankZip: b.Zip,
		Store: in.Store, LinkID: c.linkID,
		recurringView: in.Recurring,
	}
	if c.verify {
		v.BasicVerification = &basicVerification{
			Risk: c.verdict.Risk, Pass: boolInt(c.verdict.Risk == riskPass), Code: c.verdict.Code,
			Description: c.verdict.Desc, Verification: verificationLabel(c.verdict.Risk),
		}
	}
	if c.fund {
		v.FundsConfirmation = &fundsConfirmation{
			Verification: c.verdict.Funds, Pass: boolInt(c.verdict.Funds == "SufficientFunds"),
			Description: c.verdict.FundDesc,
		}
	}
	return v
}

// verificationLabel is verification_bv: the decision the risk implies.
func verificationLabel(risk string) string {
	switch risk {
	case riskPass:
		return "Accepted"
	case riskRisky:
		return "Accepted with risk"
	}
	return "Declined"
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
