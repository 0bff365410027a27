package csvfile

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
)

// DefaultMaxRecordBytes bounds one CSV record when Options.MaxRecordBytes is
// zero. A valid record is a few kilobytes at most; the bound exists so that an
// unclosed quote or a file without line breaks cannot make Parse buffer the
// whole file.
const DefaultMaxRecordBytes = 1 << 20

// Options controls Parse. The zero value is not usable: RunDate is required.
type Options struct {
	// IgnoreColumns names header columns that Parse skips instead of
	// rejecting the file, matched case-insensitively after trimming spaces.
	// A name that is also a check field is a configuration error, because
	// ignoring it would silently drop payment data.
	IgnoreColumns []string

	// RunDate is the civil date against which authorization_date and
	// recurring_start_date are judged, normally today in the schedule's time
	// zone (see DateOf). Only its year, month and day in its own location
	// are used.
	RunDate time.Time

	// TestMode accepts the sandbox routing number 999900001, which fails the
	// ABA checksum and exists only in test mode.
	TestMode bool

	// Delimiter separates the cells of a row (ingest.delimiter): "," (the
	// default, also when empty), ";" or "\t". Amounts use a dot for decimals
	// whatever the delimiter. Any other value is a configuration error.
	Delimiter string

	// MaxRecordBytes bounds the size of one record (0 means
	// DefaultMaxRecordBytes). A longer record rejects the file.
	MaxRecordBytes int

	// Logger receives a debug line per parsed file; nil discards.
	Logger *slog.Logger
}

// DateOf returns the calendar day of t in t's own location, as midnight
// UTC: the form of Options.RunDate. Convert t to the schedule's time zone
// first: DateOf(now.In(loc)).
func DateOf(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Payment is one valid row, ready to be stored and submitted: the shared
// payment.Payment plus the physical line where the row starts. Text fields
// hold the cell trimmed of surrounding white space; an absent column or an
// empty cell is "". State is upper case, RecurringCycle lower case, and
// RecurringStartDate is "" for NULL. AccountLast4 is left empty. Payment
// holds the full account number and token, so it must never be logged as
// is: String, GoString and LogValue mask them.
type Payment struct {
	Line int
	payment.Payment
}

// String describes p for people, with the account and token masked.
func (p Payment) String() string {
	src := "routing " + p.BankRouting + " account " + redact.Account(p.BankAccount)
	if p.Token != "" {
		src = "token " + redact.Secret(p.Token) + " store " + p.Store
	}
	return fmt.Sprintf("line %d: %s to %q, number %q, %s", p.Line, p.Amount, p.Name, p.Number, src)
}

// GoString masks like String, so that %#v cannot leak an account number.
func (p Payment) GoString() string { return "csvfile.Payment{" + p.String() + "}" }

// LogValue masks the account and token for log/slog.
func (p Payment) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.Int("line", p.Line),
		slog.String("number", p.Number),
		slog.String("amount", p.Amount.String()),
		slog.String("routing", p.BankRouting),
		slog.String("account", redact.Account(p.BankAccount)),
	}
	if p.Token != "" {
		attrs = append(attrs, slog.String("token", redact.Secret(p.Token)), slog.String("store", p.Store))
	}
	return slog.GroupValue(attrs...)
}

// Severity says whether a Finding refuses its row.
type Severity int

// The severities. The zero value is Error, so that a Finding refuses its
// row unless it says otherwise.
const (
	// Error refuses the row.
	Error Severity = iota
	// Warning is reported with the row, which stays valid: something in it
	// looks damaged, but the payment can be made as written.
	Warning
)

// String is the severity as the rejects report writes it.
func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// EmptyValue is Finding.Value for a finding about an empty cell, such as a
// required column left empty.
const EmptyValue = "(empty)"

// Finding is one reason why one row cannot be submitted (an Error) or one
// thing about a valid row that a person should look at (a Warning). A row may
// have several. Column is the canonical (lower-case) column name, or "" when
// the finding concerns the row as a whole (a wrong number of fields, a
// duplicate payment). Value is never empty: it is the offending cell, masked
// for bank_account, bank_routing and token and cut to about 64 characters;
// EmptyValue for an empty cell; and for a finding about the whole row, what
// identifies the problem (the masked account and the amount of a duplicate
// payment, the number of fields of a row of the wrong width).
//
// In a file read from a spreadsheet (XLSX), Line is the sheet's row
// number and Cell the cell a finding about one column is on ("B7"); Cell
// is "" in a CSV file.
type Finding struct {
	Line     int
	Column   string
	Value    string
	Message  string
	Severity Severity
	Cell     string
}

// String formats f as
// `line 12, column amount: must be greater than 0 (value "-5")`, with
// "warning: " before the message of a warning.
func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(whereCell(f.Line, f.Column, f.Cell))
	if f.Severity == Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(f.Message)
	switch f.Value {
	case "":
	case EmptyValue:
		b.WriteString(" (the cell is empty)")
	default:
		b.WriteString(" (value ")
		b.WriteString(strconv.Quote(f.Value))
		b.WriteString(")")
	}
	return b.String()
}

// FileError reports that the input cannot be read as a payment file at all
// (not text, not UTF-8, malformed CSV, a bad header, or no rows), or that a
// spreadsheet damaged it so that no row can be trusted (Damaged). The whole
// file is rejected, whatever the policy for invalid rows; rows already
// passed to onRow must be discarded. Line and Column are zero and empty when
// they do not apply.
type FileError struct {
	Line   int
	Column string
	Reason string
	// Damaged marks a file that reads as a payment file but whose numbers a
	// spreadsheet changed, or may have changed (leading zeros dropped):
	// every row is refused, because its account numbers cannot be trusted.
	Damaged bool
	// Restates, when not empty, is what the error first says about the
	// cell at Line and Column, which the parser has also passed to onFinding as
	// a Finding. Error says it, for a reader who sees only the FileError
	// (failed/<file>.error.txt); Verdict leaves it out, for one who has
	// been shown the findings (batchd validate), so that no finding is
	// printed twice.
	Restates string
	// Cell is the spreadsheet cell ("B7") of an XLSX file's error about
	// one cell, named instead of Line and Column; "" in a CSV file.
	Cell string
}

// whereCell is where, naming a spreadsheet's cell instead of the line
// when there is one.
func whereCell(line int, column, cell string) string {
	if cell == "" {
		return where(line, column)
	}
	if column == "" {
		return "cell " + cell + ": "
	}
	return "cell " + cell + ", column " + column + ": "
}

// Error formats e as "line 1, column ammount: unknown column; ...".
func (e *FileError) Error() string {
	return whereCell(e.Line, e.Column, e.Cell) + e.Restates + e.Reason
}

// Verdict is Error without what a Finding already said (Restates): what
// to print after the findings of the file.
func (e *FileError) Verdict() string {
	if e.Restates == "" {
		return e.Error()
	}
	return e.Reason
}

// Summary counts the data rows of a file. Blank rows are not counted. Rows
// is always Valid + Invalid. Warnings counts the findings of severity
// Warning, on valid and invalid rows alike.
type Summary struct {
	Rows, Valid, Invalid int
	Warnings             int
}

func where(line int, column string) string {
	var b strings.Builder
	if line > 0 {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(line))
	}
	if column != "" {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString("column ")
		b.WriteString(column)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	return b.String()
}

// maxValueRunes is how much of a cell a Finding or FileError repeats.
const maxValueRunes = 64

// clip cuts s to maxValueRunes runes, marking the cut with "…".
func clip(s string) string {
	if utf8.RuneCountInString(s) <= maxValueRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == maxValueRunes-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
