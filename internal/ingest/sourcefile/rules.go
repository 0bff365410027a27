package sourcefile

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/money"
)

// Lengths the API allows (docs/ach-wire.md); user_id and funding source
// ids are UUIDs, processor tokens a few dozen characters.
const (
	maxName     = 128
	maxPhone    = 20
	maxNickname = 128
	maxUserID   = 64
	maxToken    = 256
)

// Messages of the rules that several places give.
const (
	msgAccountType = "must be checking or savings"
	msgMethod      = "must be on-demand or micro-deposits (empty: on-demand)"
	msgSourceID    = "must be a funding source id: 36 characters like 3b241101-e2bb-4255-8caf-4136c566a962"
	msgNotBoth     = "must not be given together with routing_number and account_number: a row links an account " +
		"by its numbers or by a processor token, not both"
	msgCustomerAndUser = "must be empty when user_id is given: a row names an existing customer by user_id, " +
		"or a new one by first_name, last_name and email"
)

// cellRule returns why the non-empty cell s of column c is wrong, or "".
// Whether a cell may be empty is decided by the cross-column checks.
func (v *validator) cellRule(c column, s string) string {
	switch c {
	case colUserID:
		return oneWord(s, maxUserID)
	case colFirstName, colLastName:
		return csvfile.CheckText(s, maxName)
	case colNickname:
		return csvfile.CheckText(s, maxNickname)
	case colEmail:
		return csvfile.CheckEmail(s)
	case colPhone:
		return csvfile.CheckText(s, maxPhone)
	case colRouting:
		msg, lost := csvfile.CheckRouting(s, v.testMode)
		if lost {
			v.zeros.add(v.line, s)
		}
		return msg
	case colAccount:
		return csvfile.CheckAccount(s, "account_number")
	case colAccountType:
		if t := strings.ToLower(s); t != "checking" && t != "savings" {
			return msgAccountType
		}
	case colMethod:
		if _, ok := funding.ParseMethod(s); !ok {
			return msgMethod
		}
	case colToken:
		return oneWord(s, maxToken)
	case colSourceID:
		if !isUUID(s) {
			return msgSourceID
		}
	case colAmount1, colAmount2:
		return v.deposit(s)
	}
	return ""
}

// oneWord demands text of at most max characters without spaces.
func oneWord(s string, max int) string {
	if msg := csvfile.CheckText(s, max); msg != "" {
		return msg
	}
	if strings.ContainsAny(s, " \u00a0") {
		return "must not contain spaces; copy it exactly as issued"
	}
	return ""
}

// isUUID reports the 8-4-4-4-12 hexadecimal form of the API's ids.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if b != '-' {
				return false
			}
		case !(b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'):
			return false
		}
	}
	return true
}

// deposit demands a micro-deposit as the customer reads it on the bank
// statement: dollars with at most two decimals, 0.01 to 0.99, read
// exactly by money.Parse.
func (v *validator) deposit(s string) string {
	const want = "must be a micro-deposit in dollars from 0.01 to 0.99, as on the bank statement"
	c, err := money.Parse(s)
	switch {
	case err == nil && c >= 1 && c <= 99:
		return ""
	case err == nil && !strings.Contains(s, ".") && c >= 100 && c <= 9900:
		return fmt.Sprintf("%s: write 0.%02d for %d cents", want, c/100, c/100)
	case err == nil:
		return want
	case errors.Is(err, money.ErrPrecision):
		return want + ", with at most two decimal places"
	case strings.Contains(s, ","):
		msg := want + ": use a dot for decimals"
		if whole, frac, ok := strings.Cut(s, ","); ok && !strings.Contains(frac, ",") {
			msg += ": write " + whole + "." + frac + ", not " + s
		}
		if v.sepName != "comma" {
			msg += fmt.Sprintf(" (even in a file with %ss between cells)", v.sepName)
		}
		return msg
	case strings.ContainsAny(s, "$€£¥"):
		return want + ", without a currency symbol"
	}
	return want + ", like 0.07"
}

// sourceChecks applies a funding-source row's rules that involve more
// than one cell.
func (v *validator) sourceChecks() {
	c, h := &v.cells, v.hdr
	switch {
	case c[colUserID] != "":
		for _, col := range []column{colFirstName, colLastName, colEmail, colPhone} {
			if c[col] != "" {
				v.add(col, msgCustomerAndUser)
			}
		}
	case !h.has(colFirstName, colLastName, colEmail):
		v.add(colUserID, "is required")
	default:
		unless := ""
		if h.present[colUserID] {
			unless = " unless user_id is given"
		}
		for _, col := range []column{colFirstName, colLastName, colEmail} {
			if c[col] == "" {
				v.add(col, "is required"+unless)
			}
		}
	}
	account := c[colRouting] != "" || c[colAccount] != ""
	switch {
	case account && c[colToken] != "":
		v.add(colToken, msgNotBoth)
	case account:
		v.accountRow()
	case c[colToken] != "":
		v.tokenRow()
	case h.has(colRouting, colAccount) && h.present[colToken]:
		v.add(colRouting, "is required: give routing_number and account_number, or processor_token")
	case h.present[colToken]:
		v.add(colToken, "is required")
	default:
		v.add(colRouting, "is required")
		v.add(colAccount, "is required")
	}
}

// accountRow checks a row that links an account by its numbers.
func (v *validator) accountRow() {
	c := &v.cells
	if c[colRouting] == "" {
		v.add(colRouting, "is required together with account_number")
	}
	if c[colAccount] == "" {
		v.add(colAccount, "is required together with routing_number")
	}
	if v.bad[colMethod] {
		return
	}
	switch v.accountMethod() {
	case funding.Processor:
		v.add(colMethod, "is processor, but the row gives routing_number and account_number: write on-demand "+
			"or micro-deposits, or give the processor_token instead of the numbers")
	case funding.MicroDeposits:
		if c[colAccountType] == "" {
			v.add(colAccountType, "is required for micro-deposits: checking or savings")
		}
		if funding.Deprecated(v.run) {
			v.add(colMethod, deprecated(v.run))
		}
	}
}

// deprecated is the finding on a micro-deposits row read on or after
// funding.DeprecationDate: it says what to do instead.
func deprecated(run time.Time) string {
	const day = "2006-01-02"
	return fmt.Sprintf("micro-deposit verification is deprecated for new bank accounts since %s (this file is "+
		"read on %s): write on-demand to link the account by its numbers, or have the customer link it with the "+
		"bank-linking provider and give the processor_token issued for processor %q",
		funding.DeprecationDate.Format(day), run.Format(day), funding.ProcessorName)
}

// tokenRow checks a row that links an account by a processor token.
func (v *validator) tokenRow() {
	c := &v.cells
	if m, ok := funding.ParseMethod(c[colMethod]); ok && m != funding.Processor {
		v.add(colMethod, "must be processor or empty on a row with a processor_token")
	}
	if c[colAccountType] != "" {
		v.add(colAccountType, "must be empty on a row with a processor_token: the token stands for the account, "+
			"its type included")
	}
	if c[colNickname] != "" {
		v.add(colNickname, "must be empty on a row with a processor_token: a source linked by a token has no nickname")
	}
}

// verificationChecks demands every cell of a verification row.
func (v *validator) verificationChecks() {
	for _, col := range []column{colSourceID, colAmount1, colAmount2} {
		if v.cells[col] == "" {
			v.add(col, "is required")
		}
	}
}
