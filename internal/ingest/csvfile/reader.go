package csvfile

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/batchd/batchd/internal/payment"
)

// bufSize is the read buffer of the CSV reader. It is also the slack of the
// record-size bound, because the buffer reads ahead of the current record.
const bufSize = 64 << 10

// sniffSize is how much of the file start is checked for binary content
// before the header is read, so that a binary file is named as such rather
// than as a bad header.
const sniffSize = 1024

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// errRecordTooLong is returned by limitReader and turned into a FileError by
// the decoder, which knows the line.
var errRecordTooLong = errors.New("record too long")

// errStopped ends gocsv's reading goroutine after a callback asked to stop.
var errStopped = errors.New("csvfile: parse stopped")

// limitReader fails once more than max bytes have been read since the last
// reset. The decoder resets it before each record, so it bounds the memory
// encoding/csv may spend on one record.
type limitReader struct {
	r   io.Reader
	n   int64
	max int64
}

func (l *limitReader) reset() { l.n = 0 }

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n > l.max {
		return 0, errRecordTooLong
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	return n, err
}

// openInput wraps r for encoding/csv: it bounds records, drops a UTF-8 byte
// order mark, and refuses UTF-16 and binary content.
func openInput(r io.Reader, maxRecord int) (*bufio.Reader, *limitReader, error) {
	lim := &limitReader{r: r, max: int64(maxRecord) + bufSize}
	br := bufio.NewReaderSize(lim, bufSize)
	head, err := br.Peek(sniffSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, nil, fmt.Errorf("read payment file: %w", err)
	}
	if bytes.HasPrefix(head, utf8BOM) {
		head = head[len(utf8BOM):]
		if _, err := br.Discard(len(utf8BOM)); err != nil {
			return nil, nil, fmt.Errorf("read payment file: %w", err)
		}
	}
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return nil, nil, &FileError{Line: 1, Reason: "the file is UTF-16 text; save it as CSV UTF-8"}
	}
	if i := bytes.IndexByte(head, 0); i >= 0 {
		return nil, nil, notText(1 + bytes.Count(head[:i], []byte{'\n'}))
	}
	return br, lim, nil
}

func notText(line int) error {
	return &FileError{Line: line, Reason: "not a CSV text file (it contains NUL bytes)"}
}

// newCSVReader is the one configuration of encoding/csv that Parse uses:
// the file's separator, strict quoting, any number of fields (the validator
// reports a wrong count per row), fresh record slices (gocsv's reading
// goroutine runs one record ahead of the callback, so a reused slice would
// be overwritten).
func newCSVReader(br *bufio.Reader, sep separator) *csv.Reader {
	cr := csv.NewReader(br)
	cr.Comma = rune(sep)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	return cr
}

// checkText rejects a record holding a NUL byte or invalid UTF-8, naming the
// physical line of the offending byte. column names the cell of a bad
// value and says whether it is masked; nil while reading the header itself.
func checkText(cr *csv.Reader, rec []string, column ColumnNamer) error {
	for i, f := range rec {
		nul := strings.IndexByte(f, 0)
		if nul < 0 && utf8.ValidString(f) {
			continue
		}
		line, _ := cr.FieldPos(i)
		if nul >= 0 {
			return notText(line + strings.Count(f[:nul], "\n"))
		}
		var name string
		var sensitive bool
		if column != nil {
			name, sensitive = column(len(rec), i)
		}
		bad := invalidUTF8(f)
		return &FileError{Line: line + strings.Count(f[:bad], "\n"), Column: name,
			Reason: invalidUTF8Reason(f, name, sensitive)}
	}
	return nil
}

func invalidUTF8(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
	}
	return len(s)
}

// readError turns an encoding/csv error into a FileError. Other errors, such
// as I/O errors of the source, are returned unchanged.
func readError(err error, sep separator) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return err
	}
	fe := &FileError{Line: pe.StartLine, Reason: pe.Err.Error()}
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		fe.Line = pe.Line
		fe.Reason = `a quote (") inside a field that does not start with a quote; ` +
			`put the whole field in quotes and double the inner quote ("")`
	case errors.Is(pe.Err, csv.ErrQuote):
		fe.Reason = "a quoted field is not closed, or its closing quote is not followed by a " + sep.one()
	}
	if pe.Line != fe.Line {
		fe.Reason += " (noticed at line " + strconv.Itoa(pe.Line) + ")"
	}
	return fe
}

// decoder feeds gocsv. It implements gocsv.SimpleDecoder and runs on
// gocsv's goroutine, which reads one record ahead of the callback. Therefore
// nothing about the current position is shared with the callback: the
// physical line, the raw field count and the position of a stray value travel
// inside each record, in an extra column.
type decoder struct {
	recs    Source
	hdr     *header
	stop    *atomic.Bool
	started bool
}

// tagMeta names the extra column of the records handed to gocsv. It cannot
// clash with a field name, and the header a file provides never reaches gocsv.
const tagMeta = "#meta"

// GetCSVRow returns the canonical header on the first call, then one
// canonical record per non-blank CSV record.
func (d *decoder) GetCSVRow() (row []string, err error) {
	defer func() {
		if p := recover(); p != nil {
			row, err = nil, fmt.Errorf("csvfile: decoder panic: %v", p)
		}
	}()
	if !d.started {
		d.started = true
		return d.hdr.gocsvHeader(), nil
	}
	if d.stop.Load() {
		return nil, errStopped
	}
	raw, line, err := d.recs.Next()
	if err != nil {
		return nil, err
	}
	return d.canonical(raw, line), nil
}

// column names the field of cell i of a record of n cells, and whether the
// field is masked in messages: "" when h is nil (the header is being read),
// the record does not line up with the header, or the column is not a
// field.
func (h *header) column(n, i int) (name string, sensitive bool) {
	if h == nil || n != len(h.index) || h.index[i] < 0 {
		return "", false
	}
	f := h.index[i]
	return payment.Fields[f].Name, f == colBankAccount || f == colBankRouting || f == colToken
}

// GetCSVRows is part of gocsv.SimpleDecoder; Parse never reads a whole file.
func (d *decoder) GetCSVRows() ([][]string, error) {
	return nil, errors.New("csvfile: reading all rows at once is not supported")
}

// canonical maps a raw record to the columns of gocsvHeader. A record whose
// field count differs from the header's keeps empty fields: its columns
// cannot be trusted, and the validator only reports the count.
func (d *decoder) canonical(raw []string, line int) []string {
	out := make([]string, d.hdr.width())
	stray, value := 0, ""
	if len(raw) == len(d.hdr.index) {
		for i, v := range raw {
			switch f := d.hdr.index[i]; f {
			case colIgnored:
			case colUnnamed:
				if stray == 0 && strings.TrimSpace(v) != "" {
					stray, value = i+1, strings.TrimSpace(v)
				}
			default:
				if f <= colExtra {
					out[d.hdr.extraCell(colExtra-f)] = v
				} else {
					out[d.hdr.pos[f]] = v
				}
			}
		}
	}
	out[len(out)-1] = meta{line: line, fields: len(raw), stray: stray, value: value}.String()
	return out
}

// meta is what the decoder tells the validator about a record.
type meta struct {
	line   int    // physical line where the record starts
	fields int    // number of fields in the raw record
	stray  int    // 1-based column without a header name that holds a value, or 0
	value  string // the value in column stray, trimmed
}

// String is "line,fields,stray", followed by ",value" when there is a stray
// value (which may hold commas: it is the rest of the string).
func (m meta) String() string {
	var b [3 * 20]byte
	out := strconv.AppendInt(b[:0], int64(m.line), 10)
	out = strconv.AppendInt(append(out, ','), int64(m.fields), 10)
	out = strconv.AppendInt(append(out, ','), int64(m.stray), 10)
	if m.stray > 0 {
		return string(out) + "," + m.value
	}
	return string(out)
}

// parseMeta reverses meta.String. It fails only when gocsv did not deliver
// the column, which a changed gocsv global could cause.
func parseMeta(s string) (meta, bool) {
	a, rest, ok1 := strings.Cut(s, ",")
	b, rest, ok2 := strings.Cut(rest, ",")
	c, value, _ := strings.Cut(rest, ",")
	line, err1 := strconv.Atoi(a)
	fields, err2 := strconv.Atoi(b)
	stray, err3 := strconv.Atoi(c)
	m := meta{line: line, fields: fields, stray: stray, value: value}
	return m, ok1 && ok2 && err1 == nil && err2 == nil && err3 == nil && line > 0
}

// isBlank reports a record with no value at all, such as ",,," or a line of
// spaces. Spreadsheets write such lines; they carry no payment and are
// skipped wherever they appear.
func isBlank(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}
