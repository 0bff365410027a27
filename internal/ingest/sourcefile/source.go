package sourcefile

import (
	"errors"
	"strings"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
)

// cellKind is the csvfile.CellKind of raw column i of the header: how a
// spreadsheet's typed cell in it is read.
func (h *header) cellKind(i int) csvfile.CellKind {
	if i < 0 || i >= len(h.index) {
		return csvfile.TextCell
	}
	return columnCellKind(h.index[i])
}

// CellKindOf is the csvfile.CellKind of a funding-source or verification
// file's column, by its canonical name; TextCell for any other name.
func CellKindOf(name string) csvfile.CellKind {
	c, ok := lookup(name)
	if !ok {
		return csvfile.TextCell
	}
	return columnCellKind(c)
}

// Columns are the canonical names of kind's columns, in order: a funding
// kind's, or an applied kind's (approvals, cancels: every column it
// reads).
func Columns(kind payment.BatchKind) []string {
	if info, _ := kind.Info(); info.Applied {
		return info.Header.Columns
	}
	return names(kind)
}

// columnCellKind is the csvfile.CellKind of column c (or a negative
// marker: TextCell).
func columnCellKind(c column) csvfile.CellKind {
	switch c {
	case colUserID, colRouting, colAccount, colSourceID:
		return csvfile.IdentifierCell
	case colAmount1, colAmount2:
		return csvfile.AmountCell
	}
	return csvfile.TextCell
}

// DetectSource tells the kind of the file src reads from its header row,
// as Detect does a CSV file's: a spreadsheet's header has no delimiter to
// get wrong, so only its cells count. A header that cannot be read is a
// payment file's, for csvfile.ParseSource to explain.
func DetectSource(src csvfile.Source, opts csvfile.Options) (payment.BatchKind, error) {
	raw, _, err := src.Header()
	var fe *csvfile.FileError
	if errors.As(err, &fe) {
		return payment.KindPayments, nil
	}
	if err != nil {
		return payment.KindPayments, err
	}
	ignore := ignoreSet(opts.IgnoreColumns)
	var cells []string
	for _, cell := range raw {
		if !ignore[strings.ToLower(strings.TrimSpace(cell))] {
			cells = append(cells, cell)
		}
	}
	return KindOf(cells), nil
}
