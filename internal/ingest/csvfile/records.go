package csvfile

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ColumnNamer names cell i of a record of n cells for a message, and says
// whether its value is sensitive (masked as an account number). It returns
// "" for a cell it cannot name, such as one of a record that does not line
// up with the header.
type ColumnNamer func(n, i int) (name string, sensitive bool)

// Records reads the raw records of a CSV file with Parse's robustness, for
// the parsers of other kinds of file (internal/ingest/sourcefile): a UTF-8
// byte order mark is dropped; UTF-16, NUL bytes, invalid UTF-8 (explained
// as Windows-1252), quoting errors and records longer than
// Options.MaxRecordBytes are *FileErrors naming the line; records in which
// every cell is blank are skipped; and each record comes with the physical
// line where it starts. Memory use does not grow with the file.
type Records struct {
	cr       *csv.Reader
	lim      *limitReader
	sep      separator
	maxBytes int
	nextLine int // the line after the last record read
	column   ColumnNamer
	head     []byte      // the start of the file, to tell the separator of an unreadable header row
	trip     *roundTrip  // the signs of a spreadsheet round trip; nil unless Parse reads
	marks    *quoteMarks // where the file's quoted fields start, with trip
}

// NewRecords starts reading r with opts' Delimiter and MaxRecordBytes (the
// other options are not used). It fails with a *FileError when the start
// of r shows that it is not UTF-8 text, and with a plain error for a bad
// option or a failure to read r.
func NewRecords(r io.Reader, opts Options) (*Records, error) { return newRecords(r, opts, false) }

// newRecords is NewRecords; with signs, the records also gather the signs
// of a spreadsheet round trip (Records.heldForRoundTrip), for Parse.
func newRecords(r io.Reader, opts Options, signs bool) (*Records, error) {
	if opts.MaxRecordBytes < 0 {
		return nil, fmt.Errorf("csvfile: Options.MaxRecordBytes %d is negative", opts.MaxRecordBytes)
	}
	sep, err := parseSeparator(opts.Delimiter)
	if err != nil {
		return nil, err
	}
	var marks *quoteMarks
	if signs {
		marks = newQuoteMarks(r, sep)
		r = marks
	}
	br, lim, err := openInput(r, opts.maxRecordBytes())
	if err != nil {
		return nil, err
	}
	head, _ := br.Peek(sniffSize) // an error shows again, and is reported, on reading
	rs := &Records{cr: newCSVReader(br, sep), lim: lim, sep: sep, maxBytes: opts.maxRecordBytes(), nextLine: 1,
		head: bytes.Clone(head)}
	if signs {
		rs.trip, rs.marks = &roundTrip{}, marks
	}
	return rs, nil
}

// SetColumns names the cells of the records Next returns in its messages
// about invalid text, masking the sensitive ones. Without it a bad cell is
// named by no column, and masked when it holds four digits or more. A CSV
// file has no typed cells: the CellKinds are not needed.
func (rs *Records) SetColumns(column ColumnNamer, _ CellKinds) { rs.column = column }

// Header reads the first record, the header row, and the line it starts
// on. An empty file is a *FileError.
func (rs *Records) Header() ([]string, int, error) {
	rs.lim.reset()
	raw, err := rs.cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, 0, &FileError{Reason: "empty file: a header row is required"}
	}
	if errors.Is(err, errRecordTooLong) {
		return nil, 0, &FileError{Line: 1, Reason: "the header row is too long; is a quote left open?"}
	}
	if err != nil {
		return nil, 0, rs.headerError(err)
	}
	line := rs.advance(raw)
	if err := checkText(rs.cr, raw, nil); err != nil {
		return nil, 0, err
	}
	return raw, line, nil
}

// headerError explains a header row that cannot be read: by the
// separator that reads it, when another one does (quotedSeparator).
func (rs *Records) headerError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) && (errors.Is(pe.Err, csv.ErrQuote) || errors.Is(pe.Err, csv.ErrBareQuote)) {
		if alt := quotedSeparator(rs.head, rs.sep); alt != 0 {
			return separatorError(pe.StartLine, alt, rs.sep)
		}
	}
	return readError(err, rs.sep)
}

// Next returns the next record that is not blank and the line it starts
// on, or io.EOF after the last. A record may have any number of cells.
func (rs *Records) Next() ([]string, int, error) {
	for {
		rs.lim.reset()
		raw, err := rs.cr.Read()
		if errors.Is(err, errRecordTooLong) {
			return nil, 0, &FileError{Line: rs.nextLine, Reason: fmt.Sprintf(
				"a record starting at or after this line is longer than %d bytes; is a quote left open?", rs.maxBytes)}
		}
		if err != nil {
			return nil, 0, readError(err, rs.sep)
		}
		line := rs.advance(raw)
		if err := checkText(rs.cr, raw, rs.column); err != nil {
			return nil, 0, err
		}
		if !isBlank(raw) {
			rs.noteRoundTrip(raw, line)
			return raw, line, nil
		}
	}
}

// advance notes where the record just read ends and returns its first
// line.
func (rs *Records) advance(raw []string) int {
	line, _ := rs.cr.FieldPos(0)
	last, _ := rs.cr.FieldPos(len(raw) - 1)
	rs.nextLine = last + strings.Count(raw[len(raw)-1], "\n") + 1
	return line
}

// NextLine is the line after the last record read: after Header, the line
// the first row may start on.
func (rs *Records) NextLine() int { return rs.nextLine }

// Separator is the cell delimiter being read: ",", ";" or "\t".
func (rs *Records) Separator() string { return string(rs.sep) }

// SeparatorName names the delimiter in messages: "comma", "semicolon" or
// "tab".
func (rs *Records) SeparatorName() string { return rs.sep.one() }

// WrongSeparator explains a header row raw (read at line) that another
// delimiter would split into more of the names known accepts, or returns
// nil: "this file uses semicolons between cells; save it as CSV with
// commas, or set ingest.delimiter: \";\"". known gets names trimmed and in
// lower case.
func (rs *Records) WrongSeparator(line int, raw []string, known func(name string) bool) error {
	return wrongSeparator(line, raw, rs.sep, known)
}
