package report

import (
	"bufio"
	"compress/flate"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/xuri/excelize/v2"

	"github.com/batchd/batchd/internal/money"
)

// sheetRows is the <sheetData> of the XLSX copy's worksheet, the one part
// of the workbook that grows with the report: each row's XML is deflated
// as it is added, into a temporary file beside the report, so that when
// the last row is in, only the few hundred bytes around it are left to
// compress (sheetZip splices them together). It keeps the CRC-32 and the
// length of the XML it compressed, which the zip entry needs.
//
// The cells are written as excelize's stream writer writes them (inline
// strings, numbers in <v>), so that the workbook reads the same: a text
// cell is XML-escaped, longer than a cell may be (TotalCellChars UTF-16
// units) cut, flagged xml:space="preserve" when it starts or ends in
// white space, and a literal _xHHHH_ in it escaped as _x005F_xHHHH_.
// Numbers are exact decimals written in integers: amounts from their
// cents, dates from serialText.
type sheetRows struct {
	tmp  *os.File
	bw   *bufio.Writer // the compressed rows, into tmp
	cw   *countWriter
	zw   *flate.Writer
	crc  uint32   // of the uncompressed XML
	size int64    // of the uncompressed XML
	refs []string // the columns' letters
	rows int      // written so far, the header included
	row  []byte   // the current row's number, in decimal
	buf  []byte   // the row being built
}

// newSheetRows starts the rows of the report at name, with ncol columns,
// compressed into a temporary file in dir.
func newSheetRows(dir, name string, ncol int) (*sheetRows, error) {
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return nil, err
	}
	r := &sheetRows{tmp: tmp, refs: make([]string, ncol)}
	for i := range r.refs {
		if r.refs[i], err = excelize.ColumnNumberToName(i + 1); err != nil {
			r.discard()
			return nil, err
		}
	}
	r.cw = &countWriter{w: tmp}
	r.bw = bufio.NewWriterSize(r.cw, 64<<10)
	// BestSpeed: compressing runs while the report fills, on the cores
	// the rest of the run needs as well.
	r.zw, _ = flate.NewWriter(r.bw, flate.BestSpeed) // cannot fail at a valid level
	return r, nil
}

// countWriter counts what goes through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// header writes the first row: the column names in the header style.
func (r *sheetRows) header(names []string, style int) error {
	r.start()
	for i, n := range names {
		r.buf = appendText(r.buf, r.ref(i), style, n)
	}
	return r.end()
}

// add writes one row of values in the kinds' styles.
func (r *sheetRows) add(t Table, st styles, vals []value) error {
	r.start()
	for i, v := range vals {
		r.buf = st.appendCell(r.buf, r.ref(i), t.Columns[i].Kind, v)
	}
	return r.end()
}

func (r *sheetRows) start() {
	r.rows++
	r.row = strconv.AppendInt(r.row[:0], int64(r.rows), 10)
	r.buf = append(r.buf[:0], `<row r="`...)
	r.buf = append(r.buf, r.row...)
	r.buf = append(r.buf, `">`...)
}

// ref is the reference of column i's cell in the current row.
func (r *sheetRows) ref(i int) cellRef { return cellRef{r.refs[i], r.row} }

// cellRef is a cell's reference, column letters and row number, appended
// as it is written: a million-line report makes no string per cell.
type cellRef struct {
	col string
	row []byte
}

func (c cellRef) appendTo(dst []byte) []byte { return append(append(dst, c.col...), c.row...) }

func (r *sheetRows) end() error {
	r.buf = append(r.buf, `</row>`...)
	r.crc = crc32.Update(r.crc, crc32.IEEETable, r.buf)
	r.size += int64(len(r.buf))
	_, err := r.zw.Write(r.buf)
	return err
}

// finish ends the compressed rows with a sync flush, not a final block:
// more compressed data follows them in the worksheet's entry. It returns
// their compressed size.
func (r *sheetRows) finish() (int64, error) {
	if err := r.zw.Flush(); err != nil {
		return 0, err
	}
	if err := r.bw.Flush(); err != nil {
		return 0, err
	}
	if _, err := r.tmp.Seek(0, 0); err != nil {
		return 0, err
	}
	return r.cw.n, nil
}

// discard removes the temporary file.
func (r *sheetRows) discard() {
	if r == nil || r.tmp == nil {
		return
	}
	r.tmp.Close()
	os.Remove(r.tmp.Name())
	r.tmp = nil
}

// appendCell appends the cell of v in column kind k; a blank is no cell.
// It never writes a formula.
func (s styles) appendCell(dst []byte, ref cellRef, k Kind, v value) []byte {
	if !v.set {
		return dst
	}
	switch k {
	case Text:
		if v.s == "" {
			return dst
		}
		return appendText(dst, ref, s.kind[Text], XMLText(v.s))
	case Int:
		return append(strconv.AppendInt(openNumber(dst, ref, s.kind[Int]), v.n, 10), closeNumber...)
	case Money:
		return appendNumber(dst, ref, s.kind[Money], moneyText(money.Cents(v.n)))
	case Date, DateTime:
		t := v.wall()
		if t.Before(firstSerial) {
			return appendText(dst, ref, s.kind[Text], v.csv(k))
		}
		return appendNumber(dst, ref, s.kind[k], serial(t))
	}
	return dst
}

func appendNumber(dst []byte, ref cellRef, style int, num string) []byte {
	return append(append(openNumber(dst, ref, style), num...), closeNumber...)
}

// openNumber appends a number cell up to its value, closeNumber after it.
func openNumber(dst []byte, ref cellRef, style int) []byte {
	dst = append(dst, `<c r="`...)
	dst = ref.appendTo(dst)
	dst = append(dst, `" s="`...)
	dst = strconv.AppendInt(dst, int64(style), 10)
	return append(dst, `"><v>`...)
}

const closeNumber = `</v></c>`

// escapeBstr escapes the underscore of every _xHHHH_ in s, overlapping
// ones included, as _x005F_ (what excelize does): a reader takes
// _xHHHH_ for the character HHHH, and _x005F_ for an underscore, so
// the text reads back as written.
func escapeBstr(s string) string {
	if !strings.Contains(s, "_x") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '_' && isBstr(s[i:]) {
			b.WriteString("_x005F")
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// isBstr says whether s starts with _xHHHH_.
func isBstr(s string) bool {
	if len(s) < 7 || s[1] != 'x' || s[6] != '_' {
		return false
	}
	for _, c := range []byte(s[2:6]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// appendText appends an inline string cell holding s, which must be valid
// XML text (XMLText).
func appendText(dst []byte, ref cellRef, style int, s string) []byte {
	s = cutUTF16(s, excelize.TotalCellChars)
	dst = append(dst, `<c r="`...)
	dst = ref.appendTo(dst)
	dst = append(dst, `" s="`...)
	dst = strconv.AppendInt(dst, int64(style), 10)
	dst = append(dst, `" t="inlineStr"><is><t`...)
	if s != "" && (strings.IndexByte(" \t\r\n", s[0]) >= 0 || strings.IndexByte(" \t\r\n", s[len(s)-1]) >= 0) {
		dst = append(dst, ` xml:space="preserve"`...)
	}
	dst = append(dst, '>')
	dst = appendEscaped(dst, escapeBstr(s))
	return append(dst, `</t></is></c>`...)
}

// appendEscaped appends s with the characters XML text cannot hold as
// themselves escaped as encoding/xml escapes them, except the line feed,
// kept as is (as excelize keeps it).
func appendEscaped(dst []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '"':
			esc = "&#34;"
		case '\'':
			esc = "&#39;"
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '\t':
			esc = "&#x9;"
		case '\r':
			esc = "&#xD;"
		default:
			continue
		}
		dst = append(dst, s[last:i]...)
		dst = append(dst, esc...)
		last = i + 1
	}
	return append(dst, s[last:]...)
}

// cutUTF16 cuts s to at most n UTF-16 code units, on a character.
func cutUTF16(s string, n int) string {
	if len(s) <= n { // every code unit takes at least one byte
		return s
	}
	units := 0
	for i, r := range s {
		units += utf16.RuneLen(r)
		if units > n {
			return s[:i]
		}
	}
	return s
}

// moneyText is an amount as the decimal a cell holds: its exact cents,
// without trailing zeros (1234.50 is 1234.5, 12.00 is 12). A spreadsheet
// reads it as the nearest binary float (see the package doc of xlsx.go);
// no float is made here.
func moneyText(c money.Cents) string {
	return trimDecimal(c.String())
}

// trimDecimal drops the trailing zeros of a decimal's fraction, and its
// point when nothing is left after it.
func trimDecimal(s string) string {
	if strings.IndexByte(s, '.') < 0 {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
