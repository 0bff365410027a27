package csvfile

import "io"

// quoteMarks passes the bytes of a CSV file through to encoding/csv and
// notes each place where a double quote opens a line or follows the
// separator: where a quoted field may start. encoding/csv reports where
// each field starts (Reader.FieldPos) but not whether it was quoted, and
// a quoted cell is text that a spreadsheet did not turn into a number
// (see roundTrip). The marks are a superset of the quoted fields' starts
// (a quote after a separator inside a quoted field is noted too), which
// is enough: only the positions encoding/csv names as field starts are
// asked about. Marks are forgotten once the records holding them are
// read, so memory stays within the read-ahead of the buffer and one
// record.
type quoteMarks struct {
	r         io.Reader
	sep       byte
	line, col int  // position of the next byte, numbered as encoding/csv does: from 1, columns in bytes
	prev      byte // the byte before, 0 at the start of the file
	bom       int  // bytes of a leading byte order mark seen; -1 once past it
	marks     []textPos
}

// textPos is a line and byte column, from 1.
type textPos struct{ line, col int }

func (p textPos) before(q textPos) bool { return p.line < q.line || p.line == q.line && p.col < q.col }

func newQuoteMarks(r io.Reader, sep separator) *quoteMarks {
	return &quoteMarks{r: r, sep: byte(sep), line: 1, col: 1}
}

func (q *quoteMarks) Read(p []byte) (int, error) {
	n, err := q.r.Read(p)
	for _, b := range p[:n] {
		q.see(b)
	}
	return n, err
}

// see notes one byte. A UTF-8 byte order mark is not counted, because
// openInput drops it before encoding/csv reads.
func (q *quoteMarks) see(b byte) {
	if q.bom >= 0 {
		if q.bom < len(utf8BOM) && b == utf8BOM[q.bom] {
			if q.bom++; q.bom == len(utf8BOM) {
				q.bom = -1
			}
			return
		}
		q.bom = -1
	}
	if b == '"' && (q.col == 1 || q.prev == q.sep) {
		q.marks = append(q.marks, textPos{q.line, q.col})
	}
	if b == '\n' {
		q.line, q.col = q.line+1, 1
	} else {
		q.col++
	}
	q.prev = b
}

// quoted reports, for the fields starting at starts (in file order), which
// open with a quote, into out; then forgets the marks before the next
// line, where the next record starts at the earliest.
func (q *quoteMarks) quoted(starts []textPos, next int, out []bool) []bool {
	out = out[:0]
	i := 0
	for _, s := range starts {
		for i < len(q.marks) && q.marks[i].before(s) {
			i++
		}
		out = append(out, i < len(q.marks) && q.marks[i] == s)
	}
	for i < len(q.marks) && q.marks[i].line < next {
		i++
	}
	q.marks = q.marks[i:]
	return out
}
