package sheet

import (
	"fmt"
	"io"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/batchd/batchd/internal/ingest/csvfile"
)

// records reads a Workbook's sheet as a csvfile.Source.
type records struct {
	w       *Workbook
	next    int // index in w.rows of the next row to read
	column  csvfile.ColumnNamer
	kinds   csvfile.CellKinds
	byName  map[string]int // canonical column name -> 0-based column
	numbers numberCells    // number cells in identifier columns
}

var _ csvfile.Source = (*records)(nil)

// Header returns the first row that is not blank, as wide as the widest
// row of the sheet: a value right of the header's last name is then a
// value in a column without a name, which the parsers report.
func (rs *records) Header() ([]string, int, error) {
	for rs.next < len(rs.w.rows) {
		i := rs.next
		rs.next++
		if blank(rs.w.rows[i]) {
			continue
		}
		return rs.pad(rs.w.rows[i]), i + 1, nil
	}
	return nil, 0, &csvfile.FileError{Reason: fmt.Sprintf("sheet %q is empty: a header row is required", rs.w.sheet)}
}

// Next returns the next row that is not blank, its cells read as their
// columns' kinds, or io.EOF after the last row. After the last row, the
// number cells found in identifier columns refuse the file.
func (rs *records) Next() ([]string, int, error) {
	for rs.next < len(rs.w.rows) {
		i := rs.next
		rs.next++
		if blank(rs.w.rows[i]) && !rs.hasFormula(i) {
			continue
		}
		rec, err := rs.read(i)
		if err != nil {
			return nil, 0, err
		}
		return rec, i + 1, nil
	}
	if err := rs.numbers.err(rs.w.sheet); err != nil {
		return nil, 0, err
	}
	return nil, 0, io.EOF
}

// SetColumns takes the parser's names and kinds of the header's columns.
func (rs *records) SetColumns(column csvfile.ColumnNamer, kinds csvfile.CellKinds) {
	rs.column, rs.kinds = column, kinds
	rs.byName = make(map[string]int, rs.w.width)
	if column == nil {
		return
	}
	for i := range rs.w.width {
		if name, _ := column(rs.w.width, i); name != "" {
			rs.byName[name] = i
		}
	}
}

// NextLine is the row after the last one read.
func (rs *records) NextLine() int { return rs.next + 1 }

// SeparatorName is "comma": a sheet has no delimiter to get wrong, and
// its rows are as wide as its header, so no message needs one.
func (rs *records) SeparatorName() string { return "comma" }

// WrongSeparator is nil: a sheet's cells are not split at a delimiter.
func (rs *records) WrongSeparator(int, []string, func(string) bool) error { return nil }

// Cell names the cell of column on row line: "B7".
func (rs *records) Cell(line int, column string) string {
	i, ok := rs.byName[column]
	if !ok || line < 1 {
		return ""
	}
	return ref(i, line)
}

// ref is the name of the cell in 0-based column i of row: "B7".
func ref(i, row int) string {
	name, err := excelize.CoordinatesToCellName(i+1, row)
	if err != nil {
		return fmt.Sprintf("R%dC%d", row, i+1)
	}
	return name
}

// pad returns row as wide as the sheet.
func (rs *records) pad(row []string) []string {
	out := make([]string, rs.w.width)
	copy(out, row)
	return out
}

// blank reports a row without a value.
func blank(row []string) bool {
	for _, c := range row {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// hasFormula reports a row with a formula cell without a value, which
// Next must not skip as blank.
func (rs *records) hasFormula(i int) bool {
	for c, v := range rs.w.rows[i] {
		if v == "" && rs.formula(ref(c, i+1)) != "" {
			return true
		}
	}
	return false
}

// formula is the formula of a cell, or "".
func (rs *records) formula(cell string) string {
	f, err := rs.w.f.GetCellFormula(rs.w.sheet, cell)
	if err != nil {
		return ""
	}
	return f
}

// kind is the CellKind of 0-based column i.
func (rs *records) kind(i int) csvfile.CellKind {
	if rs.kinds == nil {
		return csvfile.TextCell
	}
	return rs.kinds(i)
}

// name is the parser's name of 0-based column i, or "".
func (rs *records) name(i int) string {
	if rs.column == nil {
		return ""
	}
	name, _ := rs.column(rs.w.width, i)
	return name
}
