package csvfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/suggest"
)

// The columns of a payment file are the fields of a payment
// (payment.Fields, spec 2.1), identified by their position there; the
// order is also the order of findings within a row.
var numFields = len(payment.Fields)

// The columns this package's rules name.
var (
	colNumber                = column("number")
	colAmount                = column("amount")
	colMemo                  = column("memo")
	colName                  = column("name")
	colEmail                 = column("email")
	colAuthorizationDate     = column("authorization_date")
	colAddress               = column("address")
	colCity                  = column("city")
	colState                 = column("state")
	colZip                   = column("zip")
	colBankAccount           = column("bank_account")
	colBankRouting           = column("bank_routing")
	colToken                 = column("token")
	colStore                 = column("store")
	colRecurring             = column("recurring")
	colRecurringCycle        = column("recurring_cycle")
	colRecurringStartDate    = column("recurring_start_date")
	colRecurringInstallments = column("recurring_installments")
)

// column returns the position of the field named name in payment.Fields.
func column(name string) int {
	i := payment.FieldIndex(name)
	if i < 0 {
		panic("csvfile: " + name + " is not a field of a payment")
	}
	return i
}

// columnNames are the names of the columns, for suggestions.
var columnNames = payment.FieldNames()

// Markers in header.index for raw columns that map to no field. An
// extra column (extraColumns) k is marked colExtra-k.
const (
	colIgnored = -1 // named in Options.IgnoreColumns
	colUnnamed = -2 // empty header cell; its values must be empty too
	colExtra   = -3 // the first of extraColumns
)

// PayeeIDColumn is the optional column that names a row's payee for the
// bank-detail check (README "Payee bank-detail changes"): it is no check
// field, is never sent, and goes to payment.Payment.PayeeID. Listed in
// ingest.ignore_columns, it is ignored like any other column.
const PayeeIDColumn = "payee_id"

// The optional columns of the account holder's names, which a
// tokenization asks for (api.accounts: tokenize; README "Tokenized
// accounts"): no check fields, never sent with a check.
const (
	FirstNameColumn = "first_name"
	LastNameColumn  = "last_name"
)

// maxHolderName is the longest first or last name a tokenization takes
// (spec §2.3).
const maxHolderName = 128

// extraColumn is an optional column of payment files that is no check
// field: its cell goes to a field of payment.Payment of its own. Listed
// in ingest.ignore_columns, it is ignored like any other column.
type extraColumn struct {
	name string
	cell func(*payment.Payment) *string
}

// extraColumns are the extra columns, in the order their cells follow
// the fields in the records handed to gocsv (the meta column last).
var extraColumns = []extraColumn{
	{PayeeIDColumn, func(p *payment.Payment) *string { return &p.PayeeID }},
	{FirstNameColumn, func(p *payment.Payment) *string { return &p.FirstName }},
	{LastNameColumn, func(p *payment.Payment) *string { return &p.LastName }},
}

// extraIndex is the position of name in extraColumns, or -1.
func extraIndex(name string) int {
	return slices.IndexFunc(extraColumns, func(c extraColumn) bool { return c.name == name })
}

// header is the checked header row of a file.
type header struct {
	index   []int  // raw column -> field, colIgnored, colUnnamed or an extra's marker
	present []bool // field -> whether the file has its column
	fields  []int  // the fields present, in spec order: what gocsv decodes
	pos     []int  // field -> its position in the records handed to gocsv
	next    int    // the line after the header record
	// extras are the extra columns the file has (extraColumns
	// indexes, in that order): their cells follow the fields'.
	extras []int
}

func normalizeName(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// ignoreSet checks Options.IgnoreColumns and returns it normalized.
func ignoreSet(names []string) (map[string]bool, error) {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		n = normalizeName(n)
		if n == "" {
			continue
		}
		if payment.FieldIndex(n) >= 0 {
			return nil, fmt.Errorf("csvfile: ignore column %q is a check field; ignoring it would drop payment data", n)
		}
		set[n] = true
	}
	return set, nil
}

// readHeader reads the first non-blank record and maps its columns. A header
// that is wrong because the file uses another separator says so.
func readHeader(rs Source, ignore map[string]bool) (*header, error) {
	raw, line, err := rs.Header()
	if err != nil {
		return nil, err
	}
	h, err := mapHeader(raw, line, rs.NextLine(), ignore)
	if err != nil {
		if serr := rs.WrongSeparator(line, raw, isField); serr != nil {
			return nil, serr
		}
		return nil, err
	}
	return h, nil
}

// isField reports whether a normalized header name is a payment's field.
func isField(name string) bool { return payment.FieldIndex(name) >= 0 }

// mapHeader maps the cells of the header record raw, read from line on;
// next is the line after it.
func mapHeader(raw []string, line, next int, ignore map[string]bool) (*header, error) {
	h := &header{index: make([]int, len(raw)), present: make([]bool, numFields), pos: make([]int, numFields),
		next: next}
	seen := make(map[int]int, numFields) // field -> 1-based raw column
	for i, cell := range raw {
		name := normalizeName(cell)
		switch f := payment.FieldIndex(name); {
		case name == "":
			h.index[i] = colUnnamed
		case f >= 0:
			if prev, dup := seen[f]; dup {
				return nil, &FileError{Line: line, Column: name,
					Reason: fmt.Sprintf("column appears twice (columns %d and %d)", prev, i+1)}
			}
			seen[f] = i + 1
			h.index[i] = f
			h.present[f] = true
		case ignore[name]:
			h.index[i] = colIgnored
		case extraIndex(name) >= 0:
			k := extraIndex(name)
			if slices.Contains(h.index[:i], colExtra-k) {
				return nil, &FileError{Line: line, Column: name, Reason: "column appears twice"}
			}
			h.index[i] = colExtra - k
		default:
			return nil, UnknownColumn(line, i+1, cell, columnNames)
		}
	}
	if err := h.checkRequired(line); err != nil {
		return nil, err
	}
	for f := range numFields {
		if h.present[f] {
			h.pos[f] = len(h.fields)
			h.fields = append(h.fields, f)
		}
	}
	for k := range extraColumns {
		if slices.Contains(h.index, colExtra-k) {
			h.extras = append(h.extras, k)
		}
	}
	return h, nil
}

// UnknownColumn explains header cell cell, in 1-based column col of line,
// that is none of the names of a file's columns (lower case), with a "did
// you mean" when one is close. A cell with four or more digits means the
// file has no header row: the cell is then data, perhaps an account
// number, and is not repeated.
func UnknownColumn(line, col int, cell string, names []string) error {
	digits := 0
	for i := 0; i < len(cell); i++ {
		if cell[i] >= '0' && cell[i] <= '9' {
			digits++
		}
	}
	if digits >= 4 {
		return &FileError{Line: line, Reason: fmt.Sprintf(
			"the first row must be a header row of column names; column %d holds data", col)}
	}
	name := strings.TrimSpace(cell)
	reason := "unknown column; fix its name or list it in ignore_columns"
	if s := suggest.Closest(normalizeName(name), names, 2); s != "" {
		reason = fmt.Sprintf("unknown column; did you mean %s? Fix its name or list it in ignore_columns", s)
	}
	return &FileError{Line: line, Column: clip(name), Reason: reason}
}

// checkRequired rejects a header that no row could satisfy.
func (h *header) checkRequired(line int) error {
	var missing []string
	for _, f := range []int{colAmount, colMemo, colName} {
		if !h.present[f] {
			missing = append(missing, payment.Fields[f].Name)
		}
	}
	if !h.present[colEmail] && !h.present[colAddress] {
		missing = append(missing, "email or address")
	}
	bank := h.present[colBankRouting] && h.present[colBankAccount]
	token := h.present[colToken] && h.present[colStore]
	if !bank && !token {
		missing = append(missing, "bank_routing and bank_account, or token and store")
	}
	if len(missing) == 0 {
		return nil
	}
	return &FileError{Line: line, Reason: "header row lacks required column " + strings.Join(missing, "; ")}
}

// gocsvHeader is the header the decoder hands to gocsv: the fields present,
// in column order, then the extra columns present, then the column that
// carries the decoder's facts about each record. Absent fields are left
// out because gocsv's cost grows with the number of columns.
func (h *header) gocsvHeader() []string {
	out := make([]string, 0, h.width())
	for _, f := range h.fields {
		out = append(out, payment.Fields[f].Name)
	}
	for _, k := range h.extras {
		out = append(out, "#"+extraColumns[k].name)
	}
	return append(out, tagMeta)
}

// width is the number of cells of a record handed to gocsv.
func (h *header) width() int { return len(h.fields) + len(h.extras) + 1 }

// extraCell is the position of extra column k's cell in the records
// handed to gocsv; the file has the column.
func (h *header) extraCell(k int) int { return len(h.fields) + slices.Index(h.extras, k) }
