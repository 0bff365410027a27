package csvfile

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/gocarina/gocsv"
)

// Parse reads a payment file from r as a stream and validates every row. It
// calls onRow for each valid row and onFinding for each finding, in line
// order, on the caller's goroutine; a row with a finding of severity Error
// never reaches onRow, and a valid row's warnings come before the row.
// Either callback may be nil. When a callback returns an error, Parse stops
// reading and returns that error; a callback that wants cancellation returns
// ctx.Err().
//
// Parse returns a *FileError when r cannot be read as a payment file at all:
// then the whole file is rejected, and rows already passed to onRow must be
// discarded by the caller (a FileError may be found after many rows, for
// example invalid UTF-8 on line 500000). An empty file and a file with a
// header but no rows are FileErrors, and so is a file in which a
// spreadsheet dropped the leading zeros of a routing number or ZIP code
// (FileError.Damaged), found once every row has been read and reported, or
// that shows a spreadsheet re-saved it while its account or check numbers
// may have lost their leading zeros (the round-trip rule, roundtrip.go). Errors reading r are returned wrapped,
// and are not FileErrors. A panic in a callback is repeated by Parse after
// its reading goroutine has ended.
//
// Memory use does not grow with the file, apart from one small map entry per
// row (a 64-bit hash and a line number) for duplicate detection.
func Parse(r io.Reader, opts Options, onRow func(Payment) error, onFinding func(Finding) error) (Summary, error) {
	ignore, _, err := opts.check()
	if err != nil {
		return Summary{}, err
	}
	rs, err := newRecords(r, opts, true)
	if err != nil {
		return Summary{}, err
	}
	sum, err := parseSource(rs, ignore, opts, onRow, onFinding)
	if err == nil {
		err = rs.heldForRoundTrip() // a CSV file only: a sheet's cells have types
	}
	return sum, err
}

// ParseSource is Parse reading the records of src, such as a sheet of an
// XLSX workbook (internal/ingest/sheet), with the same rules and the same
// results; a finding about a spreadsheet's cell names it (Finding.Cell).
func ParseSource(src Source, opts Options, onRow func(Payment) error, onFinding func(Finding) error) (Summary, error) {
	ignore, _, err := opts.check()
	if err != nil {
		return Summary{}, err
	}
	return parseSource(src, ignore, opts, onRow, onFinding)
}

func parseSource(rs Source, ignore map[string]bool, opts Options, onRow func(Payment) error,
	onFinding func(Finding) error) (Summary, error) {
	hdr, err := readHeader(rs, ignore)
	if err != nil {
		return Summary{}, fileOrIOError(err)
	}
	rs.SetColumns(hdr.column, hdr.cellKind)
	c := &consumer{v: newValidator(opts, hdr), src: rs, onRow: onRow, onFinding: onFinding}
	dec := &decoder{recs: rs, hdr: hdr, stop: &c.stop}
	err = gocsv.UnmarshalDecoderToCallback(dec, c.handle)
	if c.panicked {
		panic(c.panicValue)
	}
	switch {
	case c.err != nil:
		return c.sum, c.err
	case err != nil:
		return c.sum, WithCell(rs, fileOrIOError(err))
	case c.sum.Rows == 0:
		return c.sum, &FileError{Reason: "no rows: the file has a header row but no payments"}
	}
	if err := c.v.zeros.err(); err != nil {
		logger(opts).Debug("payment file damaged by a spreadsheet", "rows", c.sum.Rows, "err", err)
		return c.sum, WithCell(rs, err)
	}
	logger(opts).Debug("parsed payment file", "rows", c.sum.Rows, "valid", c.sum.Valid, "invalid", c.sum.Invalid,
		"warnings", c.sum.Warnings)
	return c.sum, nil
}

func fileOrIOError(err error) error {
	var fe *FileError
	if errors.As(err, &fe) {
		return fe
	}
	return fmt.Errorf("read payment file: %w", err)
}

func (o Options) check() (map[string]bool, separator, error) {
	if o.RunDate.IsZero() {
		return nil, 0, errors.New("csvfile: Options.RunDate is required to judge authorization dates")
	}
	if o.MaxRecordBytes < 0 {
		return nil, 0, fmt.Errorf("csvfile: Options.MaxRecordBytes %d is negative", o.MaxRecordBytes)
	}
	sep, err := parseSeparator(o.Delimiter)
	if err != nil {
		return nil, 0, err
	}
	ignore, err := ignoreSet(o.IgnoreColumns)
	return ignore, sep, err
}

func (o Options) maxRecordBytes() int {
	if o.MaxRecordBytes == 0 {
		return DefaultMaxRecordBytes
	}
	return o.MaxRecordBytes
}

func logger(o Options) *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// consumer receives the records gocsv decodes. Its handle method runs on the
// goroutine that called Parse; stop is the only state it shares with the
// decoder on gocsv's goroutine.
type consumer struct {
	v          *validator
	src        Source // names a spreadsheet's cells
	onRow      func(Payment) error
	onFinding  func(Finding) error
	sum        Summary
	stop       atomic.Bool
	err        error
	panicked   bool
	panicValue any
}

// handle validates one record and calls back. After a callback failed or
// panicked it only lets gocsv drain, so that gocsv's goroutine ends; Parse
// then returns the error or repeats the panic.
func (c *consumer) handle(rec record) {
	if c.stop.Load() {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			c.panicked, c.panicValue = true, p
			c.stop.Store(true)
		}
	}()
	// Every column of the header handed to gocsv, the meta column last: a
	// record of another length has its cells out of place.
	n := len(rec.cells)
	if n != c.v.recordWidth {
		c.fail(fmt.Errorf("csvfile: gocsv handed over a record of %d columns, want %d", n, c.v.recordWidth))
		return
	}
	m, ok := parseMeta(rec.cells[n-1])
	if !ok {
		c.fail(errors.New("csvfile: gocsv lost the line column"))
		return
	}
	c.sum.Rows++
	p, findings, valid := c.v.check(&rec, m)
	if valid {
		c.sum.Valid++
	} else {
		c.sum.Invalid++
	}
	for _, f := range findings {
		if f.Severity == Warning {
			c.sum.Warnings++
		}
		if c.onFinding != nil {
			if f.Column != "" {
				f.Cell = c.src.Cell(f.Line, f.Column)
			}
			if err := c.onFinding(f); err != nil {
				c.fail(err)
				return
			}
		}
	}
	if valid && c.onRow != nil {
		if err := c.onRow(p); err != nil {
			c.fail(err)
		}
	}
}

func (c *consumer) fail(err error) {
	c.err = err
	c.stop.Store(true)
}
