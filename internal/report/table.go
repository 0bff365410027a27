package report

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/money"
)

// A report is a Table: a header of typed columns and rows of typed cells,
// filled once and written in every configured Format. The CSV rendering is
// text for machines, exactly what batchd always wrote (Writer: formula
// protection, money as money.Cents.String, dates as YYYY-MM-DD and
// YYYY-MM-DD HH:MM:SS); the XLSX rendering is typed cells for people
// (xlsx.go): text stays text, amounts are numbers, dates are dates.

// Kind is what a column holds, and so how each format shows its cells.
type Kind uint8

// The kinds of column, and the Go value a cell of each takes. nil is a
// blank cell in every kind, and so is the zero time.Time.
const (
	// Text is a string: identifiers (check id, number, label, routing,
	// masked account, zip, file name), names, messages. An XLSX text
	// cell, so that 0000070001 keeps its zeros and 11/12 is no date.
	// Any value whose type is a string type is accepted.
	Text Kind = iota
	// Int is a whole number (int, int64, uint32, uint64, ...): batch,
	// line, count.
	Int
	// Money is a money.Cents: an XLSX number with two decimals.
	Money
	// Date is a time.Time, shown as its day in its own location.
	Date
	// DateTime is a time.Time, shown to the second in its own location.
	DateTime
)

func (k Kind) String() string {
	switch k {
	case Text:
		return "text"
	case Int:
		return "int"
	case Money:
		return "money"
	case Date:
		return "date"
	case DateTime:
		return "datetime"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Column is one column of a report: its header and its kind.
type Column struct {
	Name string
	Kind Kind
}

// Table is the layout of one report.
type Table struct {
	Sheet   string // the worksheet's name in the XLSX copy (at most 31 characters)
	Columns []Column
}

// Names returns the column headers, the CSV's first record.
func (t Table) Names() []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
	}
	return out
}

// Format is a file format a report is written in: report.formats.
type Format string

// The formats.
const (
	CSV  Format = "csv"  // for machines: text, byte for byte what batchd always wrote
	XLSX Format = "xlsx" // for people: typed cells (see xlsx.go)
)

// FormatsOf converts the configuration's report.formats.
func FormatsOf(names []string) []Format {
	out := make([]Format, len(names))
	for i, n := range names {
		out[i] = Format(strings.ToLower(strings.TrimSpace(n)))
	}
	return out
}

// resolve checks formats and drops repeats. None means CSV alone, what
// batchd wrote before report.formats existed.
func resolve(formats []Format) ([]Format, error) {
	if len(formats) == 0 {
		return []Format{CSV}, nil
	}
	var out []Format
	for _, f := range formats {
		switch f {
		case CSV, XLSX:
		default:
			return nil, fmt.Errorf("unknown report format %q (want csv or xlsx)", string(f))
		}
		if !contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

func contains(fs []Format, f Format) bool {
	for _, g := range fs {
		if g == f {
			return true
		}
	}
	return false
}

// PathAs returns a report's path or name, given as any format's (".csv",
// ".xlsx"), for format f: payroll.csv.results.csv becomes
// payroll.csv.results.xlsx and back.
func PathAs(path string, f Format) string {
	for _, g := range []Format{CSV, XLSX} {
		if strings.HasSuffix(path, "."+string(g)) {
			path = strings.TrimSuffix(path, "."+string(g))
			break
		}
	}
	return path + "." + string(f)
}

// value is one cell, converted from the Go value a caller gave.
type value struct {
	set bool   // false: a blank cell
	s   string // Text
	n   int64  // Int; Money in cents; Date and DateTime as wall-clock Unix seconds (the local time read as UTC)
}

// wall is the wall-clock time of a Date or DateTime value, in UTC.
func (v value) wall() time.Time { return time.Unix(v.n, 0).UTC() }

// csv renders the cell as the CSV always showed it.
func (v value) csv(k Kind) string {
	if !v.set {
		return ""
	}
	switch k {
	case Int:
		return strconv.FormatInt(v.n, 10)
	case Money:
		return money.Cents(v.n).String()
	case Date:
		return v.wall().Format(time.DateOnly)
	case DateTime:
		return v.wall().Format(time.DateTime)
	}
	return v.s
}

var errType = errors.New("wrong type of value")

// convert checks a cell against its column and converts it.
func convert(c Column, x any) (value, error) {
	if x == nil {
		return value{}, nil
	}
	bad := func() (value, error) {
		return value{}, fmt.Errorf("column %s (%s): %w %T", c.Name, c.Kind, errType, x)
	}
	switch c.Kind {
	case Text:
		if s, ok := x.(string); ok {
			return value{set: true, s: s}, nil
		}
		if rv := reflect.ValueOf(x); rv.Kind() == reflect.String {
			return value{set: true, s: rv.String()}, nil
		}
		return bad()
	case Int:
		if _, isMoney := x.(money.Cents); isMoney {
			return bad() // an amount belongs in a Money column
		}
		n, ok, err := wholeNumber(x)
		if err != nil {
			return value{}, fmt.Errorf("column %s: %w", c.Name, err)
		}
		if !ok {
			return bad()
		}
		return value{set: true, n: n}, nil
	case Money:
		m, ok := x.(money.Cents)
		if !ok {
			return bad()
		}
		return value{set: true, n: int64(m)}, nil
	case Date, DateTime:
		t, ok := x.(time.Time)
		if !ok {
			return bad()
		}
		if t.IsZero() {
			return value{}, nil
		}
		y, mo, d := t.Date()
		h, mi, s := 0, 0, 0
		if c.Kind == DateTime {
			h, mi, s = t.Clock()
		}
		return value{set: true, n: time.Date(y, mo, d, h, mi, s, 0, time.UTC).Unix()}, nil
	}
	return value{}, fmt.Errorf("column %s: unknown kind %s", c.Name, c.Kind)
}

// wholeNumber reads any integer type (int, uint32, a named int...) as an
// int64; ok is false for a value of no integer type, and an unsigned one
// above the int64 range is an error.
func wholeNumber(x any) (n int64, ok bool, err error) {
	rv := reflect.ValueOf(x)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), true, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if u := rv.Uint(); u <= math.MaxInt64 {
			return int64(u), true, nil
		}
		return 0, true, fmt.Errorf("%d is out of range", rv.Uint())
	}
	return 0, false, nil
}

// CSVRecord renders one row of typed cells as the CSV shows them (before
// Writer neutralises and quotes them).
func (t Table) CSVRecord(cells ...any) ([]string, error) {
	if len(cells) != len(t.Columns) {
		return nil, fmt.Errorf("report %s: %d cells for %d columns", t.Sheet, len(cells), len(t.Columns))
	}
	out := make([]string, len(cells))
	for i, x := range cells {
		v, err := convert(t.Columns[i], x)
		if err != nil {
			return nil, fmt.Errorf("report %s: %w", t.Sheet, err)
		}
		out[i] = v.csv(t.Columns[i].Kind)
	}
	return out, nil
}

// Rows is a report being written, in every format at once, each under a
// temporary name until Commit. Add the rows, then Commit or Discard.
type Rows struct {
	t       Table
	formats []Format
	paths   []string
	csv     *atomicFile
	cw      *Writer
	xlsx    *xlsxBuilder
	vals    []value
	rec     []string // the CSV's record of the row being added
	done    bool
}

// Create starts the report whose CSV path is path (ending in .csv) in each
// of formats (none: CSV alone); the XLSX copy's path is PathAs(path, XLSX).
// The header is written from the table's columns.
func (t Table) Create(path string, formats []Format) (*Rows, error) {
	fs, err := resolve(formats)
	if err != nil {
		return nil, fmt.Errorf("write report %s: %w", path, err)
	}
	if len(t.Columns) == 0 {
		return nil, fmt.Errorf("write report %s: no columns", path)
	}
	r := &Rows{t: t, formats: fs, vals: make([]value, len(t.Columns)), rec: make([]string, len(t.Columns))}
	for _, f := range fs {
		p := PathAs(path, f)
		r.paths = append(r.paths, p)
		switch f {
		case CSV:
			if r.csv, err = createAtomic(p); err == nil {
				r.cw = NewWriter(r.csv)
				err = r.cw.Write(t.Names()...)
			}
		case XLSX:
			r.xlsx, err = newXLSX(p, t)
		}
		if err != nil {
			r.Discard()
			return nil, fmt.Errorf("write report %s: %w", p, err)
		}
	}
	return r, nil
}

// Add writes one row: a cell per column, of the column's kind (see Kind).
func (r *Rows) Add(cells ...any) error {
	if r.done {
		return errors.New("report: row added after Commit or Discard")
	}
	if len(cells) != len(r.t.Columns) {
		return fmt.Errorf("report %s: %d cells for %d columns", r.t.Sheet, len(cells), len(r.t.Columns))
	}
	for i, x := range cells {
		v, err := convert(r.t.Columns[i], x)
		if err != nil {
			return fmt.Errorf("report %s: %w", r.t.Sheet, err)
		}
		r.vals[i] = v
	}
	if r.cw != nil {
		for i, v := range r.vals {
			r.rec[i] = v.csv(r.t.Columns[i].Kind)
		}
		if err := r.cw.Write(r.rec...); err != nil {
			return err
		}
	}
	if r.xlsx != nil {
		return r.xlsx.add(r.vals)
	}
	return nil
}

// Commit finishes every format, syncs each file and only then renames each
// into place, so that a failure leaves the previous reports as they were.
// It returns the paths written, in the order of the formats.
func (r *Rows) Commit() ([]string, error) {
	if r.done {
		return nil, errors.New("report: Commit after Commit or Discard")
	}
	defer r.Discard() // removes what is left on an error
	if r.cw != nil {
		if err := r.cw.Flush(); err != nil {
			return nil, fmt.Errorf("write report %s: %w", r.csv.path, err)
		}
		if err := r.csv.sync(); err != nil {
			return nil, fmt.Errorf("write report %s: %w", r.csv.path, err)
		}
	}
	if r.xlsx != nil {
		if err := r.xlsx.build(); err != nil {
			return nil, fmt.Errorf("write report %s: %w", r.xlsx.out.path, err)
		}
	}
	for _, f := range r.formats {
		a := r.csv
		if f == XLSX {
			a = r.xlsx.out
		}
		if err := a.rename(); err != nil {
			return nil, fmt.Errorf("write report %s: %w", a.path, err)
		}
	}
	return r.paths, nil
}

// Discard abandons the report: its temporary files are removed and any
// earlier report of the same path stays. It is a no-op after Commit.
func (r *Rows) Discard() {
	if r.done {
		return
	}
	r.done = true
	r.csv.discard()
	if r.xlsx != nil {
		r.xlsx.discard()
	}
}

// Write writes a report whose CSV path is path in every one of formats
// (none: CSV alone) from one fill function, each file atomically like
// WriteFile. It returns the paths written, in the order of the formats.
// When fill or a format fails, no file is replaced.
func (t Table) Write(path string, formats []Format, fill func(*Rows) error) ([]string, error) {
	r, err := t.Create(path, formats)
	if err != nil {
		return nil, err
	}
	if err := fill(r); err != nil {
		r.Discard()
		return nil, fmt.Errorf("write report %s: %w", path, err)
	}
	return r.Commit()
}

// Columns builds a table's columns from their specs, in order: "name" is
// a Text column, "name:kind" one of the kind named by Kind.String
// ("line:int", "amount:money", "sent:datetime"). Tables are package-level
// declarations, so a spec naming no kind is a programming error that
// Columns panics on as the package loads, as regexp.MustCompile does.
func Columns(specs ...string) []Column {
	out := make([]Column, len(specs))
	for i, s := range specs {
		name, kind, typed := strings.Cut(s, ":")
		out[i] = Column{Name: name, Kind: Text}
		if typed {
			k, ok := kindNamed(kind)
			if !ok {
				panic(fmt.Sprintf("report.Columns: column %q: no kind %q (text, int, money, date, datetime)", name, kind))
			}
			out[i].Kind = k
		}
	}
	return out
}

func kindNamed(name string) (Kind, bool) {
	for k := Text; k <= DateTime; k++ {
		if k.String() == name {
			return k, true
		}
	}
	return 0, false
}
