package csvfile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
)

// record is one canonical record as gocsv hands it over: the cells of the
// header's fields (header.fields), then the meta column. Its columns are
// payment.Fields, which no struct declares one by one, so gocsv fills it
// through UnmarshalCSVWithFields rather than by struct tags; the one
// exported field is there because gocsv wants a struct with one.
type record struct {
	Meta  string `csv:"#meta"` // never set: the meta column is the last cell
	cells []string
}

// UnmarshalCSVWithFields is gocsv's TypeUnmarshalCSVWithFields: gocsv calls
// it with each column of the record, in column order, and its name after
// gocsv's header normalizer. The name is not needed: the header gocsv got
// fixes the order (see consumer.handle, which checks the count).
func (r *record) UnmarshalCSVWithFields(_, value string) error {
	if r.cells == nil {
		r.cells = make([]string, 0, numFields+1)
	}
	r.cells = append(r.cells, value)
	return nil
}

// validator checks rows one by one and remembers, as hashes, what it needs
// to find duplicates within the file.
type validator struct {
	run      time.Time // RunDate as midnight UTC, to compare with parsed dates
	testMode bool
	sep      separator // the file's cell delimiter
	width    int       // number of columns in the header
	fields   []int     // the fields present, in the order of a record's cells
	dup      dupIndex
	zeros    zeroDamage // cells whose leading zeros a spreadsheet dropped, in the whole file
	out      []Finding
	errs     int // the findings in out that refuse the row
	line     int
	cells    []string // the current row by column (payment.Fields), trimmed
	bad      []bool   // the columns of the current row that broke their rule

	// extras are the extra columns of the file (header.extras), whose
	// cells follow the fields' in a record, and extra the current row's,
	// trimmed; recordWidth is a record's number of cells: the fields,
	// the extras, the meta column.
	extras      []int
	extra       []string
	recordWidth int
}

// newValidator returns the validator of one file. opts has been checked.
func newValidator(opts Options, hdr *header) *validator {
	sep, _ := parseSeparator(opts.Delimiter)
	v := &validator{
		run:      DateOf(opts.RunDate),
		testMode: opts.TestMode,
		sep:      sep,
		width:    len(hdr.index),
		fields:   hdr.fields,
		dup:      newDupIndex(),
		cells:    make([]string, numFields),
		bad:      make([]bool, numFields),
	}
	v.extras, v.extra, v.recordWidth = hdr.extras, make([]string, len(extraColumns)), hdr.width()
	return v
}

// check validates one record. It returns the findings in column order
// (errors and warnings) and whether the row is valid, with its Payment when
// it is. The returned slice is reused by the next call.
func (v *validator) check(rec *record, m meta) (Payment, []Finding, bool) {
	v.out = v.out[:0]
	v.errs = 0
	v.line = m.line
	if m.fields != v.width {
		v.addRow(fmt.Sprintf("%d fields", m.fields), fmt.Sprintf(
			"has %d fields but the header has %d; is a value with a %s not quoted?", m.fields, v.width, v.sep.one()))
		return Payment{}, v.out, false
	}
	if m.stray > 0 {
		v.addRow(shownStray(m.value), fmt.Sprintf("column %d has a value but no name in the header row", m.stray))
	}
	clear(v.cells)
	clear(v.bad)
	// Cells are trimmed of surrounding white space, the no-break space
	// spreadsheets like to add included.
	for i, col := range v.fields {
		v.cells[col] = strings.TrimSpace(rec.cells[i])
	}
	for col, s := range v.cells {
		if s == "" {
			continue
		}
		if msg := cellRules[col].apply(v, s); msg != "" {
			v.add(col, msg)
			v.bad[col] = true
		}
	}
	for _, col := range lossyColumns {
		if lossyText(v.cells[col], col == colName) {
			v.warn(col, lossyMessage)
		}
	}
	clear(v.extra)
	for i, k := range v.extras {
		v.extra[k] = strings.TrimSpace(rec.cells[len(v.fields)+i])
	}
	v.crossChecks()
	v.holderNames()
	v.duplicates()
	if len(v.out) > 1 {
		slices.SortStableFunc(v.out, func(a, b Finding) int { return columnOrder(a.Column) - columnOrder(b.Column) })
	}
	if v.errs > 0 {
		return Payment{}, v.out, false
	}
	p := v.payment()
	for k, c := range extraColumns {
		*c.cell(&p.Payment) = v.extra[k]
	}
	return p, v.out, true
}

// holderNames checks the account holder's names (first_name,
// last_name): each at most maxHolderName characters, and both or
// neither, since a tokenization takes both and the rule that splits the
// name replaces them only together (internal/tokenize.Names).
func (v *validator) holderNames() {
	first, last := v.extra[extraIndex(FirstNameColumn)], v.extra[extraIndex(LastNameColumn)]
	for _, c := range []struct{ name, cell, other, otherCell string }{
		{FirstNameColumn, first, LastNameColumn, last}, {LastNameColumn, last, FirstNameColumn, first},
	} {
		switch n := utf8.RuneCountInString(c.cell); {
		case n > maxHolderName:
			v.addCell(c.name, c.cell, fmt.Sprintf("must be at most %d characters, got %d", maxHolderName, n))
		case n == 0 && c.otherCell != "":
			v.addCell(c.name, c.cell, fmt.Sprintf("is required with %s (or leave both empty: the name is split)", c.other))
		}
	}
}

// addCell records an error about a cell of an extra column.
func (v *validator) addCell(column, cell, msg string) {
	v.errs++
	if cell == "" {
		cell = EmptyValue
	}
	v.out = append(v.out, Finding{Line: v.line, Column: column, Value: clip(cell), Message: msg})
}

// crossChecks applies the rules that involve more than one cell.
func (v *validator) crossChecks() {
	c := v.cells
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
	if !v.bad[colRecurring] {
		v.recurring()
	}
}

// pair demands that two columns are given together.
func (v *validator) pair(a, b int) {
	c := v.cells
	switch {
	case c[a] != "" && c[b] == "":
		v.add(b, "is required together with "+payment.Fields[a].Name)
	case c[a] == "" && c[b] != "":
		v.add(a, "is required together with "+payment.Fields[b].Name)
	}
}

// recurring demands the schedule of a recurring check, and no schedule on
// any other check. An empty installment count is refused rather than read as
// 0, because 0 means "indefinitely".
func (v *validator) recurring() {
	c := v.cells
	if on, _ := ParseBool(c[colRecurring]); on {
		if c[colRecurringCycle] == "" {
			v.add(colRecurringCycle, "is required when recurring is 1")
		}
		if c[colRecurringInstallments] == "" {
			v.add(colRecurringInstallments, "is required when recurring is 1 (write 0 for indefinitely)")
		}
		return
	}
	for col, f := range payment.Fields {
		if f.Recurrence && c[col] != "" && !(col == colRecurringStartDate && isNull(c[col])) {
			v.add(col, "must be empty unless recurring is 1")
		}
	}
}

// payment builds the Payment of a row without findings: each cell read by
// its field's kind, after its rule's normalisation. The rules have
// accepted every cell, so reading cannot fail; an empty cell is the zero
// value.
func (v *validator) payment() Payment {
	out := Payment{Line: v.line}
	p := &out.Payment
	for col := range payment.Fields {
		s := v.cells[col]
		if s == "" {
			continue
		}
		if norm := cellRules[col].norm; norm != nil {
			s = norm(s)
		}
		switch f := &payment.Fields[col]; f.Kind {
		case payment.Text:
			*f.Text(p) = s
		case payment.Cents:
			*f.Cents(p), _ = money.Parse(s)
		case payment.Bool:
			*f.Bool(p), _ = ParseBool(s)
		case payment.Int:
			*f.Int(p), _ = strconv.Atoi(s)
		}
	}
	return out
}

// add records an error about a cell of the current row.
func (v *validator) add(col int, msg string) {
	v.errs++
	v.out = append(v.out, Finding{Line: v.line, Column: payment.Fields[col].Name, Value: shownValue(col, v.cells[col]), Message: msg})
}

// warn records a warning about a cell of the current row: the row stays
// valid.
func (v *validator) warn(col int, msg string) {
	v.out = append(v.out, Finding{Line: v.line, Column: payment.Fields[col].Name, Value: shownValue(col, v.cells[col]),
		Message: msg, Severity: Warning})
}

// addRow records an error about the current row as a whole; value is what
// identifies the problem, already masked.
func (v *validator) addRow(value, msg string) {
	v.errs++
	if value == "" {
		value = EmptyValue
	}
	v.out = append(v.out, Finding{Line: v.line, Value: value, Message: msg})
}

// shownValue is the cell as a Finding may repeat it: EmptyValue for an empty
// cell. An account number, a routing number and a token are masked: a
// routing cell may hold an account number typed into the wrong column.
func shownValue(col int, s string) string {
	switch {
	case s == "":
		return EmptyValue
	case col == colBankRouting:
		return ShowRouting(s)
	case col == colBankAccount:
		return MaskAccount(s)
	case col == colToken:
		return redact.Secret(s)
	}
	return clip(s)
}

// shownStray is a value in a column without a name, as a Finding may repeat
// it. It may be an account number pushed out of its column, so a value with
// four digits or more is masked.
func shownStray(s string) string {
	if countDigits(s) >= 4 {
		return MaskAccount(s)
	}
	return clip(s)
}

// columnOrder sorts findings by column, row-level findings last.
func columnOrder(name string) int {
	if i := payment.FieldIndex(name); i >= 0 {
		return i
	}
	return numFields
}
