package submit

import (
	"time"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/state"
)

// checkRequest builds the create request of a row. The label and number
// are the row's identity from the ledger, never recomputed here.
func checkRequest(row *state.Row) echeck.CheckRequest {
	p := row.Payment
	req := echeck.CheckRequest{
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

// resultOf extracts what the ledger keeps of a check.
func resultOf(c *echeck.Check, note string) state.CheckResult {
	res := state.CheckResult{CheckID: c.CheckID, Status: c.Status, Note: note}
	if t, err := time.Parse(time.DateTime, c.Date); err == nil {
		res.Created = t
	}
	if c.BasicVerification != nil {
		res.Risk = c.BasicVerification.Risk
	}
	if c.FundsConfirmation != nil {
		res.FundConfirmation = c.FundsConfirmation.Verification
	}
	return res
}
