package sheet

import (
	"fmt"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/money"
)

// read returns row i (0-based) of the sheet as the text of its cells, each
// read by its column's kind (see the package doc).
func (rs *records) read(i int) ([]string, error) {
	row, line := rs.w.rows[i], i+1
	out := rs.pad(row)
	for c, v := range row {
		cell := ref(c, line)
		if v == "" {
			if f := rs.formula(cell); f != "" {
				return nil, rs.cellError(c, line, fmt.Sprintf("holds the formula =%s but no value: the program that wrote "+
					"the file did not calculate it. Open the file in a spreadsheet and save it again, or type the value",
					csvfile.Clip(f)))
			}
			continue
		}
		typ, err := rs.w.f.GetCellType(rs.w.sheet, cell)
		if err != nil {
			return nil, rs.cellError(c, line, fmt.Sprintf("cannot be read (%v); open the file in a spreadsheet and save it again", err))
		}
		switch typ {
		case excelize.CellTypeSharedString, excelize.CellTypeInlineString, excelize.CellTypeFormula:
			// Text, as stored; CellTypeFormula is a formula's text result.
		case excelize.CellTypeError:
			return nil, rs.cellError(c, line, fmt.Sprintf("holds the error %s: a formula failed. Fix the formula, "+
				"or type the value", csvfile.Clip(v)))
		case excelize.CellTypeBool:
			// "1" or "0", as a payment file's flags are written.
		case excelize.CellTypeDate:
			out[c] = rs.isoDate(c, v)
		default:
			out[c] = rs.number(c, line, cell, v)
		}
	}
	return out, nil
}

// number is the text of a number cell in 0-based column c, stored as v.
func (rs *records) number(c, line int, cell, v string) string {
	switch rs.kind(c) {
	case csvfile.IdentifierCell:
		rs.numbers.add(numberCell{cell: cell, line: line, column: rs.name(c)})
		return v
	case csvfile.AmountCell:
		// The stored decimal, to the cent; what is not an amount in
		// cents goes on as it is, for the amount rule to explain.
		if cents, err := money.ParseWire(v); err == nil {
			return cents.String()
		}
		return v
	case csvfile.DateCell:
		if rs.dateStyle(cell) {
			if d, ok := serialDate(v, rs.w.date1904); ok {
				return d
			}
		}
		return v
	}
	shown, err := rs.w.f.GetCellValue(rs.w.sheet, cell)
	if err != nil || shown == "" {
		return v
	}
	return shown
}

// isoDate is the date of a cell of type "d" (an ISO 8601 date-time as
// text) in a date column, or the cell as it is elsewhere.
func (rs *records) isoDate(c int, v string) string {
	if rs.kind(c) == csvfile.DateCell && len(v) >= 10 {
		return v[:10]
	}
	return v
}

// dateStyle reports whether a cell's number format shows a date.
func (rs *records) dateStyle(cell string) bool {
	id, err := rs.w.f.GetCellStyle(rs.w.sheet, cell)
	if err != nil {
		return false
	}
	if d, ok := rs.w.styles[id]; ok {
		return d
	}
	st, err := rs.w.f.GetStyle(id)
	d := err == nil && isDateFormat(st.NumFmt, st.CustomNumFmt)
	rs.w.styles[id] = d
	return d
}

// cellError is a *csvfile.FileError about the cell in 0-based column c of
// row line.
func (rs *records) cellError(c, line int, reason string) error {
	return &csvfile.FileError{Line: line, Column: rs.name(c), Cell: ref(c, line), Reason: reason}
}

// numberExamples is how many cells the verdict on number cells names.
const numberExamples = 5

// numberCell is a number cell in an identifier column.
type numberCell struct {
	cell   string
	line   int
	column string
}

// numberCells collects the number cells of identifier columns.
type numberCells struct {
	n     int
	first []numberCell
}

func (n *numberCells) add(c numberCell) {
	n.n++
	if len(n.first) < numberExamples {
		n.first = append(n.first, c)
	}
}

// err is the verdict on the file, or nil when no identifier is a number.
func (n *numberCells) err(sheet string) error {
	if n.n == 0 {
		return nil
	}
	c := n.first[0]
	var b strings.Builder
	fmt.Fprintf(&b, "is a number cell, not text: a number has already lost any leading zero, so this %s "+
		"cannot be trusted. ", c.column)
	if n.n > 1 {
		cells := make([]string, len(n.first))
		for i, x := range n.first {
			cells[i] = x.cell
		}
		more := ""
		if n.n > len(n.first) {
			more = " and more"
		}
		fmt.Fprintf(&b, "%d cells of identifier columns of sheet %q are numbers (%s%s). ", n.n, sheet,
			strings.Join(cells, ", "), more)
	}
	b.WriteString("A wrong account number pays the wrong account, so every row of this file is refused. " +
		"Format the column as Text and type the number again (a number cell has already lost any leading zero), " +
		"or start from the template that `batchd template` writes, whose identifier columns are Text.")
	return &csvfile.FileError{Line: c.line, Column: c.column, Cell: c.cell, Reason: b.String(), Damaged: true}
}
