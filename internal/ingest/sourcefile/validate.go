package sourcefile

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
)

// validator checks rows one by one and remembers, as hashes, what it needs
// to find duplicates within the file.
type validator struct {
	hdr      *header
	run      time.Time // RunDate as midnight UTC
	testMode bool
	sepName  string // the file's delimiter, "comma"
	dup      dupIndex
	zeros    zeroDamage
	out      []csvfile.Finding
	errs     int // the findings in out that refuse the row
	line     int
	cells    [numColumns]string // the current row by column, trimmed
	bad      [numColumns]bool   // the columns of the current row that broke their rule
}

func newValidator(hdr *header, opts csvfile.Options, sepName string) *validator {
	return &validator{hdr: hdr, run: csvfile.DateOf(opts.RunDate), testMode: opts.TestMode, sepName: sepName,
		dup: newDupIndex()}
}

// check validates one record that starts at line. It returns the findings
// in column order (row-level ones last) and whether the row is valid, with
// its Row when it is. The returned slice is reused by the next call.
func (v *validator) check(rec []string, line int) (Row, []csvfile.Finding, bool) {
	v.out, v.errs, v.line = v.out[:0], 0, line
	if n := len(v.hdr.index); len(rec) != n {
		v.addRow(fmt.Sprintf("%d fields", len(rec)), fmt.Sprintf(
			"has %d fields but the header has %d; is a value with a %s not quoted?", len(rec), n, v.sepName))
		return Row{}, v.out, false
	}
	clear(v.cells[:])
	clear(v.bad[:])
	stray := false
	for i, s := range rec {
		switch c := v.hdr.index[i]; c {
		case colIgnored:
		case colUnnamed:
			if s = strings.TrimSpace(s); s != "" && !stray {
				stray = true
				v.addRow(shownStray(s), fmt.Sprintf("column %d has a value but no name in the header row", i+1))
			}
		default:
			v.cells[c] = strings.TrimSpace(s)
		}
	}
	for c, s := range v.cells {
		if s == "" {
			continue
		}
		if msg := v.cellRule(column(c), s); msg != "" {
			v.add(column(c), msg)
			v.bad[c] = true
		}
	}
	for _, c := range []column{colFirstName, colLastName, colNickname} {
		if csvfile.LostLetters(v.cells[c], c != colNickname) {
			v.warn(c, csvfile.LostLettersMessage)
		}
	}
	if v.hdr.kind == payment.KindVerifications {
		v.verificationChecks()
	} else {
		v.sourceChecks()
	}
	v.duplicates()
	if len(v.out) > 1 {
		slices.SortStableFunc(v.out, func(a, b csvfile.Finding) int { return columnOrder(a.Column) - columnOrder(b.Column) })
	}
	if v.errs > 0 {
		return Row{}, v.out, false
	}
	return v.row(), v.out, true
}

// row builds the Request of a row without errors.
func (v *validator) row() Row {
	c := &v.cells
	r := Row{Line: v.line}
	if v.hdr.kind == payment.KindVerifications {
		r.Method, r.SourceID = funding.Verify, c[colSourceID]
		r.Amounts[0], _ = money.Parse(c[colAmount1])
		r.Amounts[1], _ = money.Parse(c[colAmount2])
		return r
	}
	r.UserID = c[colUserID]
	if r.UserID == "" {
		r.Customer = funding.Customer{FirstName: c[colFirstName], LastName: c[colLastName], Email: c[colEmail], Phone: c[colPhone]}
	}
	if c[colToken] != "" {
		r.Method, r.ProcessorToken = funding.Processor, c[colToken]
		return r
	}
	r.Method = v.accountMethod()
	r.Routing, r.Account, r.Nickname = c[colRouting], c[colAccount], c[colNickname]
	r.AccountType = strings.ToLower(c[colAccountType])
	if r.AccountType == "" {
		r.AccountType = "checking" // only on-demand rows may leave it out
	}
	return r
}

// accountMethod is the method of a row with account numbers: its method
// column's, on-demand when empty (or not readable).
func (v *validator) accountMethod() funding.Method {
	if m, ok := funding.ParseMethod(v.cells[colMethod]); ok {
		return m
	}
	return funding.OnDemand
}

// add records an error about a cell of the current row.
func (v *validator) add(c column, msg string) {
	v.errs++
	v.out = append(v.out, csvfile.Finding{Line: v.line, Column: c.String(), Value: shown(c, v.cells[c]), Message: msg})
}

// warn records a warning about a cell of the current row: the row stays
// valid.
func (v *validator) warn(c column, msg string) {
	v.out = append(v.out, csvfile.Finding{Line: v.line, Column: c.String(), Value: shown(c, v.cells[c]), Message: msg,
		Severity: csvfile.Warning})
}

// addRow records an error about the current row as a whole; value is what
// identifies the problem, already masked.
func (v *validator) addRow(value, msg string) {
	v.errs++
	v.out = append(v.out, csvfile.Finding{Line: v.line, Value: value, Message: msg})
}

// shown is a cell as a Finding may repeat it: csvfile.EmptyValue for an
// empty cell, the account number masked and the routing number shown as
// a payment file's are, the processor token never shown (redact.Secret:
// its length only).
func shown(c column, s string) string {
	switch {
	case s == "":
		return csvfile.EmptyValue
	case c == colRouting:
		return csvfile.ShowRouting(s)
	case c == colAccount:
		return csvfile.MaskAccount(s)
	case c == colToken:
		return redact.Secret(s)
	}
	return csvfile.Clip(s)
}

// shownStray is a value in a column without a name. It may be an account
// number or a token pushed out of its column, so a value with four digits
// or more is masked.
func shownStray(s string) string {
	digits := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			digits++
		}
	}
	if digits >= 4 {
		return csvfile.MaskAccount(s)
	}
	return csvfile.Clip(s)
}

// columnOrder sorts findings by column, row-level findings last.
func columnOrder(name string) int {
	if c, ok := lookup(name); ok && name != "" {
		return int(c)
	}
	return int(numColumns)
}
