package report

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/batchd/batchd/internal/money"
)

// The XLSX copy of a report, for people. One worksheet, named after the
// table; the header row is bold, frozen, and carries an autofilter over the
// whole table; every column is as wide as its widest cell (up to
// maxColWidth). Cells are typed by their column's Kind:
//
//   - Text: a string cell (inline string) with the text number format "@".
//     A value that starts with = + - @ is stored as that string, never as
//     a formula, so nothing in it is ever evaluated, and no quote is
//     prefixed (that is the CSV's defence, for programs that guess types).
//     Leading zeros stay, and 11/12 stays 11/12. Characters XML cannot
//     carry are replaced (XMLText).
//   - Int: a number with the format "0".
//   - Money: a number with the format "#,##0.00". The cell holds the exact
//     decimal of the cents (money.Cents.String, without trailing zeros),
//     written from the integer: batchd makes no float of an amount. A
//     spreadsheet reads it as the nearest binary float, the closest an
//     XLSX can hold, and shows the same cents for any amount under 10^13,
//     Excel's 15 significant digits; the CSV remains exact for every
//     amount. Sums are never made in floats: batchd sums cents.
//   - Date and DateTime: a date serial number (days since 1899-12-30, the
//     time of day as a fraction) with the format yyyy-mm-dd or
//     yyyy-mm-dd hh:mm:ss, so that a spreadsheet sorts and filters them as
//     dates; the wall-clock time of the report's zone, as in the CSV.
//     A date before 1 March 1900, which a spreadsheet cannot show, is a
//     text cell.
//
// No cell ever holds a formula: batchd never sets one. Sums such as the
// settlement's totals are numbers computed from cents.
//
// Each row is written as XML and deflated as it is added, into a
// temporary file beside the report (sheetRows), so that the work of a long
// report, compressing its sheet included, is done while it is filled, not
// after: reconcile fills the status report while it waits on the rate
// limiter. Column widths are only known once every row is in, and a
// worksheet must list them before its rows; so the rest of the worksheet
// (view, widths, filter) is written by excelize when the workbook is
// zipped, compressed then, and the compressed rows are spliced in between
// (sheetZip, through excelize's hook for the zip writer, which also writes
// the zip straight into the report's file). No copy of a report, raw or
// compressed, is held in memory whole.

// The number formats of the XLSX copies' cells, by kind.
const (
	MoneyFormat    = "#,##0.00"
	DateFormat     = "yyyy-mm-dd"
	DateTimeFormat = "yyyy-mm-dd hh:mm:ss"
	TextNumFmt     = 49 // the built-in format "@": text
	IntNumFmt      = 1  // the built-in format "0"
)

const (
	maxColWidth = 80
	minColWidth = 6
)

// excelEpoch is day 0 of the serial dates a spreadsheet counts from (for
// every date from 1 March 1900 on).
var (
	excelEpoch   = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	firstSerial  = time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC)
	sheetNameBad = strings.NewReplacer("[", "_", "]", "_", ":", "_", "*", "_", "?", "_", "/", "_", "\\", "_", "'", "_")
)

// xlsxBuilder writes one XLSX copy: the rows into sheetRows as they are
// added, the rest of the workbook (styles, the sheet's view, filter and
// widths, workbook, content types) with excelize when it is built.
type xlsxBuilder struct {
	t      Table
	out    *atomicFile // the workbook, under its temporary name
	f      *excelize.File
	rows   *sheetRows
	st     styles
	sheet  string
	widths []int
}

func newXLSX(path string, t Table) (*xlsxBuilder, error) {
	out, err := createAtomic(path)
	if err != nil {
		return nil, err
	}
	x := &xlsxBuilder{t: t, out: out, f: excelize.NewFile(), sheet: sheetName(t.Sheet), widths: make([]int, len(t.Columns))}
	for i, c := range t.Columns {
		x.widths[i] = textWidth(c.Name) + 3 // room for the filter button
	}
	if err := x.start(path); err != nil {
		x.discard()
		return nil, err
	}
	return x, nil
}

// start names the sheet, makes the styles, freezes the header row and
// writes it.
func (x *xlsxBuilder) start(path string) error {
	f := x.f
	if err := f.SetSheetName("Sheet1", x.sheet); err != nil {
		return err
	}
	if err := f.SetDocProps(&excelize.DocProperties{Creator: "batchd", Title: x.sheet}); err != nil {
		return err
	}
	var err error
	if x.st, err = newStyles(f); err != nil {
		return err
	}
	if err := f.SetPanes(x.sheet, &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft",
		Selection: []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}}}); err != nil {
		return err
	}
	if x.rows, err = newSheetRows(filepath.Dir(path), path, len(x.t.Columns)); err != nil {
		return err
	}
	return x.rows.header(x.t.Names(), x.st.header)
}

// add writes one row and widens the columns to fit it.
func (x *xlsxBuilder) add(vals []value) error {
	for i, v := range vals {
		if w := cellWidth(x.t.Columns[i].Kind, v); w > x.widths[i] {
			x.widths[i] = w
		}
	}
	return x.rows.add(x.t, x.st, vals)
}

// cellWidth is how many characters the cell shows.
func cellWidth(k Kind, v value) int {
	if !v.set {
		return 0
	}
	switch k {
	case Text:
		return textWidth(v.s)
	case Int:
		return len(strconv.FormatInt(v.n, 10))
	case Money:
		s := money.Cents(v.n).String()
		digits := strings.IndexByte(strings.TrimPrefix(s, "-"), '.')
		return len(s) + (digits-1)/3 // the thousands separators
	case Date:
		return len(time.DateOnly)
	case DateTime:
		return len(time.DateTime)
	}
	return 0
}

// textWidth is the width of the longest line of s, counting wide (East
// Asian) characters twice.
func textWidth(s string) int {
	best := 0
	for _, line := range strings.Split(s, "\n") {
		w := 0
		for _, r := range line {
			w++
			if r >= 0x1100 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hangul, r) ||
				unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || (r >= 0xFF00 && r <= 0xFF60)) {
				w++
			}
		}
		best = max(best, w)
	}
	return best
}

// sheetName makes the table's name a valid worksheet name.
func sheetName(s string) string {
	s = strings.TrimSpace(sheetNameBad.Replace(s))
	if s == "" {
		return "report"
	}
	if utf8.RuneCountInString(s) > 31 {
		s = string([]rune(s)[:31])
	}
	return s
}

// styles are the cell styles of a workbook, by kind.
type styles struct {
	header int
	kind   [DateTime + 1]int
}

func newStyles(f *excelize.File) (styles, error) {
	var s styles
	text, mf, df, sf := TextNumFmt, MoneyFormat, DateFormat, DateTimeFormat
	defs := []struct {
		id *int
		st *excelize.Style
	}{
		{&s.header, &excelize.Style{Font: &excelize.Font{Bold: true}, NumFmt: text}},
		{&s.kind[Text], &excelize.Style{NumFmt: text}},
		{&s.kind[Int], &excelize.Style{NumFmt: IntNumFmt}},
		{&s.kind[Money], &excelize.Style{CustomNumFmt: &mf}},
		{&s.kind[Date], &excelize.Style{CustomNumFmt: &df}},
		{&s.kind[DateTime], &excelize.Style{CustomNumFmt: &sf}},
	}
	for _, d := range defs {
		id, err := f.NewStyle(d.st)
		if err != nil {
			return s, err
		}
		*d.id = id
	}
	return s, nil
}

// XMLText is s as an XLSX text cell holds it: invalid UTF-8 is replaced
// as in the CSV (Safe), and so is every character XML cannot carry (the
// control characters other than tab, line feed and carriage return, and
// U+FFFE, U+FFFF), each by U+FFFD.
func XMLText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF,
			r >= 0xE000 && r <= 0xFFFD,
			r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// serial is the spreadsheet date number of a wall-clock time (UTC-based),
// as the decimal the cell holds: whole days since excelEpoch plus the
// time of day as a fraction.
//
// A spreadsheet keeps 15 significant digits of a number, and LibreOffice
// shows a time by cutting its fraction of a second: the nearest float64 of
// a time of day, cut to 15 digits, is often a hair below its second and
// showed one second early. So the serial is made here, in integers, as
// the decimal of 15 significant digits at or just above the exact time
// (never more than 10^-9 of a day, 87 µs, above), without trailing zeros.
// Rounding to the nearest second and cutting to the second both read it
// back as the same second.
func serial(t time.Time) string {
	secs := t.Unix() - excelEpoch.Unix()
	days, rest := secs/86400, secs%86400
	if rest == 0 {
		return strconv.FormatInt(days, 10)
	}
	return trimDecimal(serialText(days, rest))
}

// serialText is days + rest/86400 (0 < rest < 86400, days > 0) as a
// decimal of 15 significant digits, rounded up.
func serialText(days, rest int64) string {
	whole := strconv.FormatInt(days, 10)
	places := max(15-len(whole), 1)
	scale := int64(1)
	for range places {
		scale *= 10
	}
	// rest*scale fits in an int64: rest < 86400 < 2^17 and scale <= 10^14
	// only for a one-digit day count.
	frac := (rest*scale + 86400 - 1) / 86400 // ceil(rest/86400 * 10^places)
	if frac == scale {                       // only with very few places: the next day
		return strconv.FormatInt(days+1, 10)
	}
	digits := strconv.FormatInt(frac, 10)
	return whole + "." + strings.Repeat("0", places-len(digits)) + digits
}

// build finishes the sheet (autofilter over the whole table, widths),
// zips the workbook into the temporary file, the rows spliced into the
// worksheet (sheetZip), and syncs it.
func (x *xlsxBuilder) build() (err error) {
	defer func() {
		if cerr := x.f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	last, err := excelize.ColumnNumberToName(len(x.t.Columns))
	if err != nil {
		return err
	}
	if err := x.f.AutoFilter(x.sheet, "A1:"+last+strconv.Itoa(x.rows.rows), nil); err != nil {
		return fmt.Errorf("autofilter: %w", err)
	}
	for i, w := range x.widths {
		name := x.rows.refs[i]
		if err := x.f.SetColWidth(x.sheet, name, name, colWidth(w)); err != nil {
			return err
		}
	}
	csize, err := x.rows.finish()
	if err != nil {
		return err
	}
	z := newSheetZip(x.out, x.rows, csize)
	x.f.SetZipWriter(func(io.Writer) excelize.ZipWriter { return z })
	if err := x.f.Write(io.Discard); err != nil { // the bytes went to x.out (sheetZip)
		return err
	}
	if !z.spliced {
		return errors.New("xlsx: excelize wrote no worksheet to put the rows in")
	}
	x.rows.discard()
	return x.out.sync()
}

// colWidth is the width of a column whose widest cell shows w characters:
// two more, within minColWidth..maxColWidth.
func colWidth(w int) float64 {
	return float64(min(max(w+2, minColWidth), maxColWidth))
}

// discard drops the workbook, the compressed rows and the temporary
// report file.
func (x *xlsxBuilder) discard() {
	x.f.Close()
	x.rows.discard()
	x.out.discard()
}
