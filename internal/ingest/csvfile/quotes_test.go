package csvfile

import (
	"bytes"
	"strings"
	"testing"
)

// quoteFile writes cells as CSV rows of width columns with sep, quoting
// cell i when bit i%64 of mask is set (and always when the cell needs
// it); bom and crlf choose a byte order mark and CRLF line ends. It
// returns the file and, per row, which cells it quoted.
func quoteFile(cells []string, width int, sep separator, mask uint64, bom, crlf bool) ([]byte, [][]bool) {
	var b bytes.Buffer
	if bom {
		b.Write(utf8BOM)
	}
	eol := "\n"
	if crlf {
		eol = "\r\n"
	}
	var quoted [][]bool
	for r := 0; r*width < len(cells); r++ {
		row := make([]bool, width)
		for c := range width {
			i := r*width + c
			s := ""
			if i < len(cells) {
				s = cells[i]
			}
			if c > 0 {
				b.WriteByte(byte(sep))
			}
			q := mask&(1<<(i%64)) != 0 || s == "" && width == 1 ||
				strings.ContainsAny(s, "\"\r\n"+string(rune(sep))) || strings.HasPrefix(s, " ")
			if q {
				b.WriteString(`"` + strings.ReplaceAll(s, `"`, `""`) + `"`)
			} else {
				b.WriteString(s)
			}
			row[c] = q
		}
		b.WriteString(eol)
		quoted = append(quoted, row)
	}
	return b.Bytes(), quoted
}

// FuzzQuoteMarks: whatever the cells (quotes, separators and line breaks
// inside them included), a byte order mark and the line ends, the quote
// marks tell exactly which cells of each record were written in quotes.
func FuzzQuoteMarks(f *testing.F) {
	f.Add("a,b\nc", uint64(1), uint8(2), false, false)
	f.Add("0001234567|1086.3|Jos\u00e9 \"J\"|x;y\tz", uint64(0b1010), uint8(3), true, true)
	f.Add("\"\"|,|\n|", uint64(0), uint8(1), false, true)
	f.Fuzz(func(t *testing.T, text string, mask uint64, width uint8, bom, crlf bool) {
		w := int(width%6) + 1
		cells := strings.Split(text, "|")
		for _, sep := range separators {
			data, want := quoteFile(cells, w, sep, mask, bom, crlf)
			rs, err := newRecords(bytes.NewReader(data), Options{Delimiter: string(sep)}, true)
			if err != nil {
				return // not text: nothing to compare
			}
			rs.column = func(int, int) (string, bool) { return "", false }
			var got [][]bool
			for {
				raw, err := rs.cr.Read()
				if err != nil {
					break
				}
				starts := make([]textPos, len(raw))
				for i := range raw {
					starts[i].line, starts[i].col = rs.cr.FieldPos(i)
				}
				rs.advance(raw)
				got = append(got, rs.marks.quoted(starts, rs.nextLine, nil))
			}
			// encoding/csv skips empty lines: a row of one empty unquoted
			// cell is never read, and quoteFile quotes those.
			if len(got) != len(want) {
				t.Fatalf("sep %q: %d records read, %d written:\n%q", sep, len(got), len(want), data)
			}
			for r := range want {
				if !slicesEqual(got[r], want[r]) {
					t.Fatalf("sep %q, record %d: quoted %v, want %v:\n%q", sep, r, got[r], want[r], data)
				}
			}
		}
	})
}

func slicesEqual(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
