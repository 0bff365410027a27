package csvfile

import (
	"errors"

	"github.com/batchd/batchd/internal/payment"
)

// CellKind says how a column of a spreadsheet file reads a typed (number
// or date) cell as the text the rules judge. A CSV file has only text.
type CellKind int

// The kinds of column, for a spreadsheet's typed cells.
const (
	// TextCell reads a typed cell as the sheet shows it.
	TextCell CellKind = iota
	// IdentifierCell holds digits that may start with 0 (an account, a
	// routing number, a check number, a ZIP code, a user id): a number
	// cell has already lost any leading zero, so it is refused.
	IdentifierCell
	// AmountCell reads a number cell to the exact cent from its stored
	// value.
	AmountCell
	// DateCell reads a date cell (a serial number with a date format) as
	// YYYY-MM-DD.
	DateCell
)

// CellKinds tells the kind of 0-based column i of the header row a
// Source returned.
type CellKinds func(i int) CellKind

// Source is what ParseSource reads: a header row, then the records of a
// file one by one, each with the line (a spreadsheet's row number) where
// it starts. *Records reads a CSV file; internal/ingest/sheet reads a
// sheet of an XLSX workbook into the same records, so that every rule is
// applied in one place whatever the file's format.
type Source interface {
	// Header reads the header row and the line it is on. An empty file is
	// a *FileError.
	Header() ([]string, int, error)
	// Next returns the next record that is not blank and its line, or
	// io.EOF after the last. Problems of the file are *FileErrors.
	Next() ([]string, int, error)
	// SetColumns names the cells of the records in messages (see
	// ColumnNamer), and kinds tells how a spreadsheet reads the typed
	// cells of each column (nil: every column is TextCell).
	SetColumns(column ColumnNamer, kinds CellKinds)
	// NextLine is the line after the last record read.
	NextLine() int
	// SeparatorName names the cell delimiter in messages ("comma").
	SeparatorName() string
	// WrongSeparator explains a header row that another delimiter would
	// split into more known column names, or returns nil.
	WrongSeparator(line int, raw []string, known func(name string) bool) error
	// Cell is the spreadsheet cell ("B7") of column (a canonical column
	// name) on line, or "" for a CSV file or a column not in the header.
	Cell(line int, column string) string
}

// Cell is Records' Source.Cell: a CSV file has lines, not cells.
func (rs *Records) Cell(int, string) string { return "" }

// Records satisfies Source.
var _ Source = (*Records)(nil)

// WithCell names, in a *FileError about a cell of src, the spreadsheet
// cell; any other error is returned as is.
func WithCell(src Source, err error) error {
	var fe *FileError
	if errors.As(err, &fe) && fe.Cell == "" && fe.Line > 0 && fe.Column != "" {
		fe.Cell = src.Cell(fe.Line, fe.Column)
	}
	return err
}

// cellKind is the CellKind of raw column i of a payment file's header.
func (h *header) cellKind(i int) CellKind {
	if i < 0 || i >= len(h.index) {
		return TextCell
	}
	return fieldCellKind(h.index[i])
}

// PaymentCellKind is the CellKind of a payment file's column, by its
// canonical name (payment.Fields); TextCell for any other name.
func PaymentCellKind(name string) CellKind { return fieldCellKind(payment.FieldIndex(name)) }

// fieldCellKind is the CellKind of field f (a position in
// payment.Fields, or a negative marker).
func fieldCellKind(f int) CellKind {
	switch f {
	case colNumber, colZip, colBankAccount, colBankRouting:
		return IdentifierCell
	case colAmount:
		return AmountCell
	case colAuthorizationDate, colRecurringStartDate:
		return DateCell
	}
	return TextCell
}
