package report

import (
	"archive/zip"
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
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
//   - Money: a number with the format "#,##0.00". The value is the exact
//     decimal of the cents (money.Cents.String) read as the nearest
//     float64, only when the cell is written: a spreadsheet stores every
//     number as a binary float, so that is the closest an XLSX can hold.
//     It shows the same cents for any amount under 10^13, Excel's 15
//     significant digits; the CSV remains exact for every amount. Sums are
//     never made in floats: batchd sums cents.
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
// The column widths must be written before the first row, so the rows are
// spooled to an unlinked temporary file while the report is filled and
// replayed into excelize's stream writer at Commit, which spills the sheet
// to its own temporary file; the workbook is then zipped straight into the
// report's file (toFile), so no copy of a report, raw or compressed, is
// ever held in memory whole: a status report of 1,000,000 lines costs the
// process a few megabytes of buffers, not the size of the workbook.

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

// xlsxBuilder collects the rows of one XLSX copy.
type xlsxBuilder struct {
	t      Table
	out    *atomicFile   // the workbook, under its temporary name
	spool  *os.File      // the rows, encoded; unlinked already
	w      *bufio.Writer // on spool
	widths []int
	rows   int
	buf    []byte
}

func newXLSX(path string, t Table) (*xlsxBuilder, error) {
	out, err := createAtomic(path)
	if err != nil {
		return nil, err
	}
	spool, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.rows.tmp")
	if err != nil {
		out.discard()
		return nil, err
	}
	os.Remove(spool.Name()) // the open file lives on; a crash leaves nothing behind
	x := &xlsxBuilder{t: t, out: out, spool: spool, w: bufio.NewWriterSize(spool, 64<<10), widths: make([]int, len(t.Columns))}
	for i, c := range t.Columns {
		x.widths[i] = textWidth(c.Name) + 3 // room for the filter button
	}
	return x, nil
}

const (
	tagBlank byte = iota
	tagText
	tagNumber
)

// add spools one row and widens the columns to fit it.
func (x *xlsxBuilder) add(vals []value) error {
	b := x.buf[:0]
	for i, v := range vals {
		k := x.t.Columns[i].Kind
		switch {
		case !v.set:
			b = append(b, tagBlank)
		case k == Text:
			b = append(b, tagText)
			b = binary.AppendUvarint(b, uint64(len(v.s)))
			b = append(b, v.s...)
		default:
			b = append(b, tagNumber)
			b = binary.AppendVarint(b, v.n)
		}
		if w := cellWidth(k, v); w > x.widths[i] {
			x.widths[i] = w
		}
	}
	x.buf = b
	x.rows++
	_, err := x.w.Write(b)
	return err
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

// cell is the excelize cell of a value. It never has a Formula.
func (s styles) cell(k Kind, v value) any {
	if !v.set {
		return nil
	}
	switch k {
	case Text:
		if v.s == "" {
			return nil
		}
		return excelize.Cell{StyleID: s.kind[Text], Value: XMLText(v.s)}
	case Int:
		return excelize.Cell{StyleID: s.kind[Int], Value: v.n}
	case Money:
		return excelize.Cell{StyleID: s.kind[Money], Value: moneyValue(money.Cents(v.n))}
	case Date, DateTime:
		t := v.wall()
		if t.Before(firstSerial) {
			return excelize.Cell{StyleID: s.kind[Text], Value: v.csv(k)}
		}
		return excelize.Cell{StyleID: s.kind[k], Value: serial(t)}
	}
	return nil
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

// moneyValue is the cell value of an amount: its exact decimal text, read
// as the nearest float64. This is the one place batchd turns cents into a
// float, and it does no arithmetic with it.
func moneyValue(c money.Cents) float64 {
	f, err := strconv.ParseFloat(c.String(), 64)
	if err != nil { // cannot happen: String is always a decimal
		panic(err)
	}
	return f
}

// serial is the spreadsheet date number of a wall-clock time (UTC-based):
// whole days since excelEpoch plus the time of day as a fraction.
//
// excelize writes a number with at most 15 significant digits, cutting the
// rest, and LibreOffice shows a time by cutting its fraction of a second:
// the nearest float64 of a time of day, cut to 15 digits, is often a hair
// below its second and showed one second early. So the serial is made
// here, in integers, as the decimal of 15 significant digits at or just
// above the exact time (never more than 10^-9 of a day, 87 µs, above),
// and handed over as the float64 whose shortest form is that decimal,
// which excelize then writes unchanged. Rounding to the nearest second
// and cutting to the second both read it back as the same second.
func serial(t time.Time) float64 {
	secs := t.Unix() - excelEpoch.Unix()
	days, rest := secs/86400, secs%86400
	if rest == 0 {
		return float64(days)
	}
	f, err := strconv.ParseFloat(serialText(days, rest), 64)
	if err != nil { // cannot happen: serialText is always a decimal
		panic(err)
	}
	return f
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

// build writes the workbook to the temporary file and syncs it.
func (x *xlsxBuilder) build() (err error) {
	if err := x.w.Flush(); err != nil {
		return err
	}
	if _, err := x.spool.Seek(0, io.SeekStart); err != nil {
		return err
	}
	f := excelize.NewFile()
	toFile(f, x.out.f)
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	sheet := sheetName(x.t.Sheet)
	if err := f.SetSheetName("Sheet1", sheet); err != nil {
		return err
	}
	if err := f.SetDocProps(&excelize.DocProperties{Creator: "batchd", Title: sheet}); err != nil {
		return err
	}
	st, err := newStyles(f)
	if err != nil {
		return err
	}
	last, err := excelize.ColumnNumberToName(len(x.t.Columns))
	if err != nil {
		return err
	}
	// The autofilter is set on the worksheet before streaming, which
	// writes it out after the rows.
	if err := f.AutoFilter(sheet, "A1:"+last+strconv.Itoa(x.rows+1), nil); err != nil {
		return fmt.Errorf("autofilter: %w", err)
	}
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	// Each width is put before the ones already set: from the last
	// column back, they come out in the ascending order Excel requires.
	for i := len(x.widths) - 1; i >= 0; i-- {
		if err := sw.SetColWidth(i+1, i+1, float64(min(max(x.widths[i]+2, minColWidth), maxColWidth))); err != nil {
			return err
		}
	}
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft",
		Selection: []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}}}); err != nil {
		return err
	}
	row := make([]any, len(x.t.Columns))
	for i, c := range x.t.Columns {
		row[i] = excelize.Cell{StyleID: st.header, Value: c.Name}
	}
	if err := sw.SetRow("A1", row); err != nil {
		return err
	}
	in := bufio.NewReaderSize(x.spool, 64<<10)
	for n := range x.rows {
		for i, c := range x.t.Columns {
			v, err := readValue(in, c.Kind)
			if err != nil {
				return fmt.Errorf("read back row %d: %w", n+1, err)
			}
			row[i] = st.cell(c.Kind, v)
		}
		if err := sw.SetRow("A"+strconv.Itoa(n+2), row); err != nil {
			return err
		}
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	if err := f.Write(io.Discard); err != nil { // the bytes went to x.out.f (toFile)
		return err
	}
	return x.out.sync()
}

// toFile makes f's save zip the workbook straight into out, through
// excelize's documented hook for the zip writer. Without it, excelize
// compresses the whole workbook into a bytes.Buffer first (WriteToBuffer)
// and only then copies it out: for a report of a million lines that
// buffer alone is some hundred megabytes. The buffer excelize passes in
// then stays empty, and what it would copy from it is nothing. A sheet
// whose XML exceeds 4 GiB (several million lines) would need the zip64
// header fix-up excelize applies to that buffer; no report comes near it.
func toFile(f *excelize.File, out io.Writer) {
	f.SetZipWriter(func(io.Writer) excelize.ZipWriter { return zip.NewWriter(out) })
}

func readValue(r *bufio.Reader, k Kind) (value, error) {
	tag, err := r.ReadByte()
	if err != nil {
		return value{}, err
	}
	switch tag {
	case tagBlank:
		return value{}, nil
	case tagText:
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return value{}, err
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return value{}, err
		}
		return value{set: true, s: string(b)}, nil
	case tagNumber:
		n, err := binary.ReadVarint(r)
		if err != nil {
			return value{}, err
		}
		return value{set: true, n: n}, nil
	}
	return value{}, fmt.Errorf("bad tag %d in %s column", tag, k)
}

// discard closes the spool and removes the temporary workbook.
func (x *xlsxBuilder) discard() {
	x.spool.Close()
	x.out.discard()
}
