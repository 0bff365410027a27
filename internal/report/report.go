// Package report writes the reports that finance staff open in a
// spreadsheet: rejects, results, status, settlement, exceptions and
// archive. Each is a Table of typed columns, written from one fill
// function in every configured Format: CSV for machines (this file's
// Writer) and XLSX with typed cells for people (xlsx.go). See table.go.
//
// In the CSV, every cell is treated as untrusted text, because most of them came from a
// payment file or from the API. Following OWASP's CSV injection guidance, a
// cell whose first character could start a formula (=, +, -, @, tab,
// carriage return, or their full-width forms) is prefixed with a single
// quote, and every cell is enclosed in double quotes with embedded quotes
// doubled. Files are UTF-8 with a byte-order mark, so that Excel reads
// non-ASCII names correctly, and CRLF line ends, as RFC 4180 prescribes.
package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// BOM is the UTF-8 byte-order mark written at the start of every report.
const BOM = "\ufeff"

// Writer writes one CSV report. It buffers; call Flush (or use WriteFile).
type Writer struct {
	w   *bufio.Writer
	err error
}

// NewWriter starts a report on w, beginning with the byte-order mark.
func NewWriter(w io.Writer) *Writer {
	rw := &Writer{w: bufio.NewWriter(w)}
	_, rw.err = rw.w.WriteString(BOM)
	return rw
}

// Write writes one record. Each cell is neutralised with Safe and quoted.
// It writes straight into the buffer: a report of a million lines makes
// no string per line.
func (w *Writer) Write(cells ...string) error {
	if w.err != nil {
		return w.err
	}
	for i, c := range cells {
		if i > 0 {
			w.w.WriteByte(',')
		}
		w.w.WriteByte('"')
		s := Safe(c)
		for {
			q := strings.IndexByte(s, '"')
			if q < 0 {
				break
			}
			w.w.WriteString(s[:q+1])
			w.w.WriteByte('"')
			s = s[q+1:]
		}
		w.w.WriteString(s)
		w.w.WriteByte('"')
	}
	_, w.err = w.w.WriteString("\r\n")
	return w.err
}

// Flush writes any buffered data and reports the first error seen.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	w.err = w.w.Flush()
	return w.err
}

// Safe returns s prefixed with a single quote when a spreadsheet could read
// it as a formula: when its first character, after any leading spaces, is
// one that starts a formula or a DDE call. Invalid UTF-8 is replaced, so a
// report is always valid UTF-8.
func Safe(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	t := strings.TrimLeft(s, " ")
	if t == "" || plainNumber(s) {
		return s
	}
	r, _ := utf8.DecodeRuneInString(t)
	switch r {
	case '=', '+', '-', '@', '\t', '\r', '\n', '＝', '＋', '－', '＠':
		return "'" + s
	}
	return s
}

// plainNumber reports whether s is a plain decimal number with a sign
// (-50.00, +3): a spreadsheet reads it as that number, never as a
// formula, so it is shown as it was typed. Anything more (-2+3, 1e5, a
// space) is not one, and is guarded.
func plainNumber(s string) bool {
	if len(s) < 2 || s[0] != '-' && s[0] != '+' {
		return false
	}
	whole, frac, dot := strings.Cut(s[1:], ".")
	return digits(whole) && (!dot || digits(frac))
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// WriteFile writes a report to path atomically: it writes a temporary file
// in the same directory, syncs it, and renames it over path, so that a
// reader sees the old report or the new one, never half of one. The file is
// created with mode 0640, since reports carry names and amounts.
func WriteFile(path string, fill func(*Writer) error) error {
	a, err := createAtomic(path)
	if err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	defer a.discard() // a no-op once committed
	w := NewWriter(a)
	if err := fill(w); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := a.commit(); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	return nil
}
