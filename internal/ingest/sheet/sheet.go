package sheet

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/batchd/batchd/internal/ingest/csvfile"
)

// The bounds of a workbook when Options leaves them zero.
const (
	DefaultMaxRows             = 200_000
	DefaultMaxColumns          = 256
	DefaultMaxUnzipBytes       = 512 << 20
	defaultMaxBytes      int64 = 256 << 20
)

// Magic is how every XLSX file (a zip archive) starts.
var Magic = []byte("PK\x03\x04")

// IsXLSX reports whether head, the start of a file, is a zip archive, as
// an XLSX workbook is.
func IsXLSX(head []byte) bool { return bytes.HasPrefix(head, Magic) }

// Options chooses the sheet and bounds the reading.
type Options struct {
	// Sheet names the sheet to read (ingest.sheet); "" reads the first.
	Sheet string
	// MaxBytes bounds the file (ingest.max_file_bytes); 0: 256 MiB.
	MaxBytes int64
	// MaxUnzipBytes bounds the workbook's parts unzipped; 0:
	// DefaultMaxUnzipBytes.
	MaxUnzipBytes int64
	// MaxRows and MaxColumns bound the sheet; 0: DefaultMaxRows and
	// DefaultMaxColumns.
	MaxRows, MaxColumns int
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = defaultMaxBytes
	}
	if o.MaxUnzipBytes <= 0 {
		o.MaxUnzipBytes = DefaultMaxUnzipBytes
	}
	if o.MaxRows <= 0 {
		o.MaxRows = DefaultMaxRows
	}
	if o.MaxColumns <= 0 {
		o.MaxColumns = DefaultMaxColumns
	}
	return o
}

// Workbook is one sheet of an XLSX file, read into memory: its cells'
// stored values by row, and the workbook to ask for their types, formats
// and formulas. Records reads it as a csvfile.Source, as often as needed.
type Workbook struct {
	f        *excelize.File
	sheet    string
	rows     [][]string // stored values; rows[r-1] is sheet row r
	width    int        // the widest row, in cells
	date1904 bool
	styles   map[int]bool // style index -> whether its number format is a date's
}

// Open reads r as an XLSX workbook and loads its sheet. A file that is
// not a workbook, is malformed or too large, or has no such sheet is a
// *csvfile.FileError that says why and what to do; other errors are
// failures to read r.
func Open(r io.Reader, opts Options) (w *Workbook, err error) {
	opts = opts.withDefaults()
	data, err := io.ReadAll(io.LimitReader(r, opts.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read XLSX file: %w", err)
	}
	if int64(len(data)) > opts.MaxBytes {
		return nil, unreadable(fmt.Sprintf("the file is larger than %d bytes (ingest.max_file_bytes); split it into smaller files", opts.MaxBytes))
	}
	if !IsXLSX(data) {
		return nil, unreadable("not an XLSX workbook (it does not start as a zip archive does); " +
			"save the sheet as \"Excel 2007-365 (.xlsx)\", or name a CSV file .csv")
	}
	defer func() {
		if p := recover(); p != nil {
			w, err = nil, unreadable(fmt.Sprintf("the XLSX workbook is malformed (%v); open it in a spreadsheet and save it again", p))
		}
	}()
	f, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{
		UnzipSizeLimit: opts.MaxUnzipBytes, UnzipXMLSizeLimit: opts.MaxUnzipBytes,
	})
	if err != nil {
		return nil, openError(err, opts)
	}
	w = &Workbook{f: f, styles: map[int]bool{}}
	if err := w.load(opts); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// openError explains why excelize could not open a workbook.
func openError(err error, opts Options) error {
	msg := err.Error()
	switch {
	case errors.Is(err, zip.ErrFormat), errors.Is(err, zip.ErrAlgorithm), errors.Is(err, zip.ErrChecksum),
		errors.Is(err, io.ErrUnexpectedEOF):
		return unreadable("the XLSX workbook is not a whole zip archive (" + msg + "); was it cut short? Upload it again")
	case errors.Is(err, excelize.ErrWorkbookFileFormat), errors.Is(err, excelize.ErrWorkbookPassword),
		strings.Contains(msg, "password"):
		return unreadable("the workbook is encrypted or protected by a password; save it without a password")
	case strings.Contains(msg, "unzip size"):
		return unreadable(fmt.Sprintf("the workbook unzips to more than %d bytes, far more than a payment file needs; "+
			"save the sheet alone in a new workbook", opts.MaxUnzipBytes))
	}
	return unreadable("the XLSX workbook cannot be read (" + msg + "); open it in a spreadsheet and save it again")
}

// unreadable is a *csvfile.FileError about the file as a whole.
func unreadable(reason string) error { return &csvfile.FileError{Reason: reason} }

// Close releases the workbook.
func (w *Workbook) Close() error { return w.f.Close() }

// Sheet is the name of the sheet read.
func (w *Workbook) Sheet() string { return w.sheet }

// load picks the sheet and reads its stored values, within the bounds.
func (w *Workbook) load(opts Options) error {
	list := w.f.GetSheetList()
	switch {
	case len(list) == 0:
		return unreadable("the workbook has no sheet")
	case opts.Sheet == "":
		w.sheet = list[0]
	default:
		for _, s := range list {
			if strings.EqualFold(s, opts.Sheet) {
				w.sheet = s
			}
		}
		if w.sheet == "" {
			return unreadable(fmt.Sprintf("the workbook has no sheet named %q (ingest.sheet); its sheets are %s: "+
				"rename the sheet, or set ingest.sheet to one of them", opts.Sheet, quoteAll(list)))
		}
	}
	if props, err := w.f.GetWorkbookProps(); err == nil && props.Date1904 != nil {
		w.date1904 = *props.Date1904
	}
	rows, err := w.f.Rows(w.sheet)
	if err != nil {
		return unreadable(fmt.Sprintf("sheet %q cannot be read (%v); open the file in a spreadsheet and save it again", w.sheet, err))
	}
	defer rows.Close()
	for rows.Next() {
		if len(w.rows) == opts.MaxRows {
			return unreadable(fmt.Sprintf("sheet %q has more than %d rows; split it into smaller files", w.sheet, opts.MaxRows))
		}
		row, err := rows.Columns(excelize.Options{RawCellValue: true})
		if err != nil {
			return unreadable(fmt.Sprintf("row %d of sheet %q cannot be read (%v); open the file in a spreadsheet and save it again",
				len(w.rows)+1, w.sheet, err))
		}
		if len(row) > opts.MaxColumns {
			return unreadable(fmt.Sprintf("row %d of sheet %q has %d columns, more than the %d a payment file may have; "+
				"delete the columns after the last one of the file", len(w.rows)+1, w.sheet, len(row), opts.MaxColumns))
		}
		w.rows = append(w.rows, row)
		w.width = max(w.width, len(row))
	}
	if err := rows.Error(); err != nil {
		return unreadable(fmt.Sprintf("sheet %q cannot be read (%v); open the file in a spreadsheet and save it again", w.sheet, err))
	}
	return nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// Records returns a new reader of the sheet's rows from the top, as a
// csvfile.Source.
func (w *Workbook) Records() csvfile.Source { return &records{w: w} }
