package csvfile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
)

// record is what gocsv decodes each canonical row into. gocsv only fills
// exported fields; the type stays unexported.
type record struct {
	Number                string `csv:"number"`
	Amount                string `csv:"amount"`
	Memo                  string `csv:"memo"`
	Name                  string `csv:"name"`
	Email                 string `csv:"email"`
	AuthorizationDate     string `csv:"authorization_date"`
	Label                 string `csv:"label"`
	Phone                 string `csv:"phone"`
	Address               string `csv:"address"`
	City                  string `csv:"city"`
	State                 string `csv:"state"`
	Zip                   string `csv:"zip"`
	BankAccount           string `csv:"bank_account"`
	BankRouting           string `csv:"bank_routing"`
	Token                 string `csv:"token"`
	Store                 string `csv:"store"`
	TypeInfo              string `csv:"type_info"`
	Recurring             string `csv:"recurring"`
	RecurringCycle        string `csv:"recurring_cycle"`
	RecurringStartDate    string `csv:"recurring_start_date"`
	RecurringInstallments string `csv:"recurring_installments"`
	VerifyBeforeSave      string `csv:"verify_before_save"`
	FundConfirmation      string `csv:"fund_confirmation"`

	Meta string `csv:"#meta"` // see meta
}

// cells returns the fields in column order, trimmed of surrounding white
// space (including the no-break space spreadsheets like to add).
func (r *record) cells() [numFields]string {
	c := [numFields]string{
		r.Number, r.Amount, r.Memo, r.Name, r.Email, r.AuthorizationDate, r.Label,
		r.Phone, r.Address, r.City, r.State, r.Zip, r.BankAccount, r.BankRouting,
		r.Token, r.Store, r.TypeInfo, r.Recurring, r.RecurringCycle,
		r.RecurringStartDate, r.RecurringInstallments, r.VerifyBeforeSave,
		r.FundConfirmation,
	}
	for i := range c {
		c[i] = strings.TrimSpace(c[i])
	}
	return c
}

// validator checks rows one by one and remembers, as hashes, what it needs
// to find duplicates within the file.
type validator struct {
	run      time.Time // RunDate as midnight UTC, to compare with parsed dates
	testMode bool
	width    int // number of columns in the header
	dup      dupIndex
	out      []Finding
	line     int
	cells    [numFields]string
}

func newValidator(opts Options, width int) *validator {
	return &validator{
		run:      DateOf(opts.RunDate),
		testMode: opts.TestMode,
		width:    width,
		dup:      newDupIndex(),
	}
}

// check validates one record. It returns the findings in column order, or
// none and the Payment. The returned slice is reused by the next call.
func (v *validator) check(rec *record, m meta) (Payment, []Finding) {
	v.out = v.out[:0]
	v.line = m.line
	if m.fields != v.width {
		v.addRow(fmt.Sprintf("has %d fields but the header has %d; is a value with a comma not quoted?",
			m.fields, v.width))
		return Payment{}, v.out
	}
	if m.stray > 0 {
		v.addRow(fmt.Sprintf("column %d has a value but no name in the header row", m.stray))
	}
	v.cells = rec.cells()
	var bad [numFields]bool
	for col, s := range v.cells {
		if s == "" {
			continue
		}
		if msg := cellRules[col].apply(v, s); msg != "" {
			v.add(col, msg)
			bad[col] = true
		}
	}
	v.crossChecks(&bad)
	v.duplicates(&bad)
	if len(v.out) > 0 {
		slices.SortStableFunc(v.out, func(a, b Finding) int { return columnOrder(a.Column) - columnOrder(b.Column) })
		return Payment{}, v.out
	}
	return v.payment(), nil
}

// crossChecks applies the rules that involve more than one cell.
func (v *validator) crossChecks(bad *[numFields]bool) {
	c := &v.cells
	for _, col := range []int{colAmount, colMemo, colName} {
		if c[col] == "" {
			v.add(col, "is required")
		}
	}
	if c[colEmail] == "" && c[colAddress] == "" {
		v.add(colEmail, "is required unless address is given")
	}
	if c[colAddress] != "" {
		for _, col := range []int{colCity, colState, colZip} {
			if c[col] == "" {
				v.add(col, "is required when address is given")
			}
		}
	}
	v.pair(colBankRouting, colBankAccount)
	v.pair(colToken, colStore)
	bank := c[colBankRouting] != "" || c[colBankAccount] != ""
	token := c[colToken] != "" || c[colStore] != ""
	switch {
	case bank && token:
		v.add(colToken, "must not be given together with bank_routing and bank_account")
	case !bank && !token:
		v.add(colBankRouting, "is required: give bank_routing and bank_account, or token and store")
	}
	if !bad[colRecurring] {
		v.recurring()
	}
}

// pair demands that two columns are given together.
func (v *validator) pair(a, b int) {
	c := &v.cells
	switch {
	case c[a] != "" && c[b] == "":
		v.add(b, "is required together with "+fieldNames[a])
	case c[a] == "" && c[b] != "":
		v.add(a, "is required together with "+fieldNames[b])
	}
}

// recurring demands the schedule of a recurring check, and no schedule on
// any other check. An empty installment count is refused rather than read as
// 0, because 0 means "indefinitely".
func (v *validator) recurring() {
	c := &v.cells
	if on, _ := parseBool(c[colRecurring]); on {
		if c[colRecurringCycle] == "" {
			v.add(colRecurringCycle, "is required when recurring is 1")
		}
		if c[colRecurringInstallments] == "" {
			v.add(colRecurringInstallments, "is required when recurring is 1 (write 0 for indefinitely)")
		}
		return
	}
	for _, col := range []int{colRecurringCycle, colRecurringStartDate, colRecurringInstallments} {
		if c[col] != "" && !(col == colRecurringStartDate && isNull(c[col])) {
			v.add(col, "must be empty unless recurring is 1")
		}
	}
}

// payment builds the Payment of a row without findings.
func (v *validator) payment() Payment {
	c := &v.cells
	amount, _ := money.Parse(c[colAmount])
	installments := 0
	if c[colRecurringInstallments] != "" {
		installments, _ = strconv.Atoi(c[colRecurringInstallments])
	}
	recurring, _ := parseBool(c[colRecurring])
	verify, _ := parseBool(c[colVerifyBeforeSave])
	fund, _ := parseBool(c[colFundConfirmation])
	start := c[colRecurringStartDate]
	if isNull(start) {
		start = ""
	}
	return Payment{Line: v.line, Payment: payment.Payment{
		Number: c[colNumber], Amount: amount, Memo: c[colMemo], Name: c[colName],
		Email: c[colEmail], AuthorizationDate: c[colAuthorizationDate], Label: c[colLabel],
		Phone: c[colPhone], Address: c[colAddress], City: c[colCity],
		State: strings.ToUpper(c[colState]), Zip: c[colZip], BankAccount: c[colBankAccount],
		BankRouting: c[colBankRouting], Token: c[colToken], Store: c[colStore],
		TypeInfo: c[colTypeInfo], Recurring: recurring,
		RecurringCycle: strings.ToLower(c[colRecurringCycle]), RecurringStartDate: start,
		RecurringInstallments: installments, VerifyBeforeSave: verify, FundConfirmation: fund,
	}}
}

// add records a finding about a cell of the current row.
func (v *validator) add(col int, msg string) {
	v.out = append(v.out, Finding{Line: v.line, Column: fieldNames[col], Value: shownValue(col, v.cells[col]), Message: msg})
}

// addRow records a finding about the current row as a whole.
func (v *validator) addRow(msg string) {
	v.out = append(v.out, Finding{Line: v.line, Message: msg})
}

// shownValue is the cell as a Finding may repeat it. An account number and a
// token are masked. A routing cell that is not 9 digits is masked as well:
// it may be an account number typed into the wrong column.
func shownValue(col int, s string) string {
	switch {
	case s == "":
		return ""
	case col == colBankAccount, col == colBankRouting && !(len(s) == 9 && isDigits(s)):
		return strings.ToValidUTF8(redact.Account(s), "")
	case col == colToken:
		return redact.Secret(s)
	}
	return clip(s)
}

// columnOrder sorts findings by column, row-level findings last.
func columnOrder(name string) int {
	if i := fieldIndex(name); i >= 0 {
		return i
	}
	return numFields
}
