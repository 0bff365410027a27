package sourcefile

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
)

// Row is one valid row: the funding.Request it asks for, with its Method
// set, and the physical line where the row starts. It holds the full
// account number and the processor token, so it must never be logged as
// is: String, GoString and LogValue mask them.
type Row struct {
	Line int
	funding.Request
}

// String describes r for people, with the account and the token masked.
func (r Row) String() string {
	who := "user " + r.UserID
	if r.UserID == "" {
		who = "customer " + r.Customer.Email
	}
	switch r.Method {
	case funding.Verify:
		return fmt.Sprintf("line %d: verify %s with %s and %s", r.Line, r.SourceID, r.Amounts[0], r.Amounts[1])
	case funding.Processor:
		return fmt.Sprintf("line %d: %s, processor token %s", r.Line, who, redact.Secret(r.ProcessorToken))
	}
	return fmt.Sprintf("line %d: %s, %s routing %s account %s (%s)", r.Line, who, r.Method, r.Routing,
		redact.Account(r.Account), r.AccountType)
}

// GoString masks like String, so that %#v cannot leak an account number
// or a token.
func (r Row) GoString() string { return "sourcefile.Row{" + r.String() + "}" }

// LogValue masks the account and the token for log/slog.
func (r Row) LogValue() slog.Value {
	attrs := []slog.Attr{slog.Int("line", r.Line), slog.String("method", string(r.Method))}
	switch {
	case r.Method == funding.Verify:
		attrs = append(attrs, slog.String("source_id", r.SourceID))
	case r.ProcessorToken != "":
		attrs = append(attrs, slog.String("token", redact.Secret(r.ProcessorToken)))
	default:
		attrs = append(attrs, slog.String("routing", r.Routing), slog.String("account", redact.Account(r.Account)))
	}
	return slog.GroupValue(attrs...)
}

// Parse reads a funding-source or verification file (kind, as Detect
// told) from r as a stream and validates every row, as csvfile.Parse does
// a payment file: it calls onRow for each valid row and onFinding for each
// finding, in line order, on the caller's goroutine; a row with a finding
// of severity Error never reaches onRow, and a valid row's warnings come
// before the row. Either callback may be nil; when one returns an error,
// Parse stops and returns it.
//
// opts is read as csvfile.Parse reads it: RunDate (required) decides
// whether micro-deposits are deprecated (funding.Deprecated), TestMode
// accepts the sandbox routing number, Delimiter, MaxRecordBytes and
// IgnoreColumns (which never hide a column of the file's own kind) read
// the file. A file that cannot be read as such a file at all, has no
// rows, or whose routing numbers lost their leading zeros in a spreadsheet
// (found after every row was reported) is a *csvfile.FileError: rows
// already passed to onRow must be discarded. Memory use does not grow with
// the file, apart from a small map entry per row for duplicates.
func Parse(r io.Reader, kind payment.BatchKind, opts csvfile.Options, onRow func(Row) error,
	onFinding func(csvfile.Finding) error) (csvfile.Summary, error) {
	var sum csvfile.Summary
	if err := canParse(kind, opts); err != nil {
		return sum, err
	}
	rs, err := csvfile.NewRecords(r, opts)
	if err != nil {
		return sum, err // a *csvfile.FileError, a bad option, or already says it read the file
	}
	return ParseSource(rs, kind, opts, onRow, onFinding)
}

// canParse refuses a kind this package does not parse, or options
// without the run date micro-deposit rows are judged by.
func canParse(kind payment.BatchKind, opts csvfile.Options) error {
	if kind != payment.KindSources && kind != payment.KindVerifications {
		return fmt.Errorf("sourcefile: cannot parse a file of kind %s", kind)
	}
	if opts.RunDate.IsZero() {
		return errors.New("sourcefile: Options.RunDate is required to judge micro-deposit rows")
	}
	return nil
}

// ParseSource is Parse reading the records of src, such as a sheet of an
// XLSX workbook (internal/ingest/sheet), with the same rules and results;
// a finding about a spreadsheet's cell names it (csvfile.Finding.Cell).
func ParseSource(rs csvfile.Source, kind payment.BatchKind, opts csvfile.Options, onRow func(Row) error,
	onFinding func(csvfile.Finding) error) (csvfile.Summary, error) {
	var sum csvfile.Summary
	if err := canParse(kind, opts); err != nil {
		return sum, err
	}
	raw, line, err := rs.Header()
	if err != nil {
		return sum, fileOrIOError(err, kind)
	}
	hdr, err := mapHeader(kind, raw, line, ignoreSet(opts.IgnoreColumns))
	if err != nil {
		probe := &header{kind: kind}
		if serr := rs.WrongSeparator(line, raw, probe.known); serr != nil {
			return sum, serr
		}
		return sum, err
	}
	rs.SetColumns(hdr.column, hdr.cellKind)
	v := newValidator(hdr, opts, rs.SeparatorName())
	for {
		rec, line, err := rs.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return sum, csvfile.WithCell(rs, fileOrIOError(err, kind))
		}
		sum.Rows++
		row, findings, valid := v.check(rec, line)
		if valid {
			sum.Valid++
		} else {
			sum.Invalid++
		}
		for _, f := range findings {
			if f.Severity == csvfile.Warning {
				sum.Warnings++
			}
			if onFinding != nil {
				if f.Column != "" {
					f.Cell = rs.Cell(f.Line, f.Column)
				}
				if err := onFinding(f); err != nil {
					return sum, err
				}
			}
		}
		if valid && onRow != nil {
			if err := onRow(row); err != nil {
				return sum, err
			}
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if sum.Rows == 0 {
		return sum, &csvfile.FileError{Reason: fmt.Sprintf("no rows: the file has a header row but no %s rows", kindWord(kind))}
	}
	if err := v.zeros.err(); err != nil {
		log.Debug("file damaged by a spreadsheet", "kind", kind.String(), "rows", sum.Rows, "err", err)
		return sum, csvfile.WithCell(rs, err)
	}
	log.Debug("parsed file", "kind", kind.String(), "rows", sum.Rows, "valid", sum.Valid, "invalid", sum.Invalid,
		"warnings", sum.Warnings)
	return sum, nil
}

// fileOrIOError returns a *csvfile.FileError as is, and wraps any other
// error as a failure to read the file.
func fileOrIOError(err error, kind payment.BatchKind) error {
	var fe *csvfile.FileError
	if errors.As(err, &fe) {
		return fe
	}
	return fmt.Errorf("read %s file: %w", kindWord(kind), err)
}
