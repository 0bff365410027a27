package report

import (
	"archive/zip"
	"bytes"
	"compress/flate"
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
// Each row goes into excelize's stream writer as it is added (excelize
// spills the sheet to a temporary file beside the report past 16 MB), so
// that the work of a long report is done while it is filled, not after.
// Column widths are only known once every row is in, but a worksheet must
// list them before its rows: they are put in when the workbook is zipped,
// into the worksheet's XML just before its <sheetData> (sheetZip), through
// excelize's hook for the zip writer, which also writes the zip straight
// into the report's file. No copy of a report, raw or compressed, is held
// in memory whole.

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

// xlsxBuilder streams the rows of one XLSX copy into its workbook.
type xlsxBuilder struct {
	t      Table
	out    *atomicFile // the workbook, under its temporary name
	f      *excelize.File
	sw     *excelize.StreamWriter
	st     styles
	sheet  string
	widths []int
	rows   int
	row    []any
}

func newXLSX(path string, t Table) (*xlsxBuilder, error) {
	out, err := createAtomic(path)
	if err != nil {
		return nil, err
	}
	x := &xlsxBuilder{t: t, out: out, f: excelize.NewFile(excelize.Options{TmpDir: filepath.Dir(path)}),
		sheet: sheetName(t.Sheet), widths: make([]int, len(t.Columns)), row: make([]any, len(t.Columns))}
	for i, c := range t.Columns {
		x.widths[i] = textWidth(c.Name) + 3 // room for the filter button
	}
	if err := x.start(); err != nil {
		x.discard()
		return nil, err
	}
	return x, nil
}

// start names the sheet, makes the styles, freezes the header row and
// writes it.
func (x *xlsxBuilder) start() error {
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
	if x.sw, err = f.NewStreamWriter(x.sheet); err != nil {
		return err
	}
	if err := x.sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft",
		Selection: []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}}}); err != nil {
		return err
	}
	for i, c := range x.t.Columns {
		x.row[i] = excelize.Cell{StyleID: x.st.header, Value: c.Name}
	}
	return x.sw.SetRow("A1", x.row)
}

// add writes one row and widens the columns to fit it.
func (x *xlsxBuilder) add(vals []value) error {
	for i, v := range vals {
		k := x.t.Columns[i].Kind
		x.row[i] = x.st.cell(k, v)
		if w := cellWidth(k, v); w > x.widths[i] {
			x.widths[i] = w
		}
	}
	x.rows++
	return x.sw.SetRow("A"+strconv.Itoa(x.rows+1), x.row)
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

// build finishes the sheet (autofilter over the whole table, widths),
// zips the workbook into the temporary file and syncs it.
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
	// The stream writer writes the worksheet's autofilter after the rows.
	if err := x.f.AutoFilter(x.sheet, "A1:"+last+strconv.Itoa(x.rows+1), nil); err != nil {
		return fmt.Errorf("autofilter: %w", err)
	}
	if err := x.sw.Flush(); err != nil {
		return err
	}
	x.f.SetZipWriter(func(io.Writer) excelize.ZipWriter { return newSheetZip(x.out.f, x.cols()) })
	if err := x.f.Write(io.Discard); err != nil { // the bytes went to x.out.f (sheetZip)
		return err
	}
	return x.out.sync()
}

// cols is the worksheet's <cols> element, as excelize writes it: each
// column as wide as its widest cell, within minColWidth..maxColWidth.
func (x *xlsxBuilder) cols() string {
	var b strings.Builder
	b.WriteString("<cols>")
	for i, w := range x.widths {
		width := float64(min(max(w+2, minColWidth), maxColWidth))
		fmt.Fprintf(&b, `<col min="%d" max="%d" width="%s" customWidth="1"/>`, i+1, i+1, strconv.FormatFloat(width, 'f', -1, 64))
	}
	b.WriteString("</cols>")
	return b.String()
}

// sheetZip is the zip writer excelize saves the workbook through
// (File.SetZipWriter). It writes straight into the report's file, where
// excelize's own would first compress the whole workbook into a
// bytes.Buffer (a hundred megabytes for a report of a million lines); the
// buffer excelize passes in stays empty, and what it then copies from it
// is nothing. It deflates at the fastest level: compressing the sheet is
// most of what a run does after its last request. And it puts the column
// widths into the worksheet (insertBefore). A sheet whose XML exceeds
// 4 GiB (several million lines) would need the zip64 fix-up excelize
// applies to its buffer; no report comes near it.
type sheetZip struct {
	*zip.Writer
	cols string
}

func newSheetZip(out io.Writer, cols string) sheetZip {
	zw := zip.NewWriter(out)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	return sheetZip{Writer: zw, cols: cols}
}

// Create opens a part of the workbook; the worksheet's gets the widths.
func (z sheetZip) Create(name string) (io.Writer, error) {
	w, err := z.Writer.Create(name)
	if err != nil || !strings.HasPrefix(name, "xl/worksheets/") || !strings.HasSuffix(name, ".xml") {
		return w, err
	}
	return &insertBefore{w: w, mark: []byte("<sheetData>"), text: []byte(z.cols)}, nil
}

// insertBefore writes text into w just before the first mark. The mark
// is in the worksheet's first few hundred bytes; until it is seen,
// what comes is held back, up to maxHead bytes: a worksheet without it
// there is an error, never written without its widths.
type insertBefore struct {
	w          io.Writer
	mark, text []byte
	head       []byte
	done       bool
}

const maxHead = 1 << 20

func (b *insertBefore) Write(p []byte) (int, error) {
	if b.done {
		return b.w.Write(p)
	}
	b.head = append(b.head, p...)
	i := bytes.Index(b.head, b.mark)
	if i < 0 {
		if len(b.head) > maxHead {
			return 0, fmt.Errorf("xlsx: no %s in the first %d bytes of the worksheet", b.mark, maxHead)
		}
		return len(p), nil
	}
	b.done = true
	for _, part := range [][]byte{b.head[:i], b.text, b.head[i:]} {
		if _, err := b.w.Write(part); err != nil {
			return 0, err
		}
	}
	b.head = nil
	return len(p), nil
}

// discard drops the workbook, its temporary files and the temporary
// report file.
func (x *xlsxBuilder) discard() {
	x.f.Close()
	x.out.discard()
}
