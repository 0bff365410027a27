package csvfile

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
)

// This file holds the checks for the ways a spreadsheet damages a payment
// file when it exports one: another cell separator than the comma, a file
// saved in Windows-1252, number columns that lost their leading zeros or
// their digits past the 15th, and letters turned into "?". Each message
// says, in a finance person's words, how to export the sheet so that it
// does not happen.

// separator is the cell delimiter of a file.
type separator rune

// separators are the delimiters ingest.delimiter may name.
var separators = []separator{',', ';', '\t'}

// parseSeparator reads Options.Delimiter.
func parseSeparator(s string) (separator, error) {
	switch s {
	case "", ",":
		return ',', nil
	case ";":
		return ';', nil
	case "\t":
		return '\t', nil
	}
	return 0, fmt.Errorf(`csvfile: Options.Delimiter %q: want ",", ";" or a tab`, s)
}

// one and many name the separator in messages: "comma", "commas".
func (s separator) one() string {
	switch s {
	case ';':
		return "semicolon"
	case '\t':
		return "tab"
	}
	return "comma"
}

func (s separator) many() string { return s.one() + "s" }

// setting is the ingest.delimiter line that selects s, as YAML.
func (s separator) setting() string {
	if s == '\t' {
		return `ingest.delimiter: "\t"`
	}
	return `ingest.delimiter: "` + string(s) + `"`
}

// wrongSeparator explains a header row that another separator would split
// into more known column names than sep does, or returns nil. A spreadsheet
// set to a European locale saves "CSV" with semicolons, and "Text (Tab
// delimited)" uses tabs; read with commas, such a header is one long unknown
// column. known says which names (trimmed, lower case) are column names.
func wrongSeparator(line int, raw []string, sep separator, known func(string) bool) error {
	best, bestN := separator(0), knownColumns(raw, 0, known)
	for _, alt := range separators {
		if alt == sep {
			continue
		}
		if n := knownColumns(raw, alt, known); n >= 2 && n > bestN {
			best, bestN = alt, n
		}
	}
	if best == 0 {
		return nil
	}
	return separatorError(line, best, sep)
}

// separatorError says that the header row at line reads as column names
// with best between cells, not with sep, the separator set.
func separatorError(line int, best, sep separator) error {
	reason := fmt.Sprintf("this file uses %s between cells; save it as CSV with commas, or set %s",
		best.many(), best.setting())
	if sep != ',' {
		reason = fmt.Sprintf("this file uses %s between cells, but %s is set; save it with %s, or set %s",
			best.many(), sep.setting(), sep.many(), best.setting())
		if best == ',' {
			reason += ` (or leave ingest.delimiter out: a comma is the default)`
		}
	}
	return &FileError{Line: line, Reason: reason}
}

// quotedSeparator finds the separator of a file whose header row, the
// first record of head, cannot be read with sep at all: LibreOffice's
// "quote all text cells" export writes "number";"name", whose closing
// quote a comma reader expects before a comma. It returns the other
// separator that reads that record without error into the most cells (two
// or more), or 0.
func quotedSeparator(head []byte, sep separator) separator {
	best, bestN := separator(0), 1
	for _, alt := range separators {
		if alt == sep {
			continue
		}
		cr := csv.NewReader(bytes.NewReader(head))
		cr.Comma = rune(alt)
		if rec, err := cr.Read(); err == nil && len(rec) > bestN {
			best, bestN = alt, len(rec)
		}
	}
	return best
}

// knownColumns counts the cells of raw that are known names, after
// splitting each cell at sep (0: not at all).
func knownColumns(raw []string, sep separator, known func(string) bool) int {
	n := 0
	for _, cell := range raw {
		parts := []string{cell}
		if sep != 0 {
			parts = strings.Split(cell, string(sep))
		}
		for _, p := range parts {
			if known(normalizeName(p)) {
				n++
			}
		}
	}
	return n
}

// decimalComma reports an amount written with a decimal comma, 1234,56.
func decimalComma(s string) bool {
	whole, frac, ok := strings.Cut(s, ",")
	return ok && isDigits(whole) && isDigits(frac) && len(frac) <= 2
}

// amountCommaMessage refuses an amount with a comma. In a file separated by
// semicolons or tabs the comma is most likely a decimal comma, written by a
// spreadsheet in a European locale.
func amountCommaMessage(sep separator, s string) string {
	if decimalComma(s) {
		msg := "amounts must use a dot for decimals: write " + strings.Replace(s, ",", ".", 1) + ", not " + s
		if sep != ',' {
			msg += fmt.Sprintf(" (even in a file with %s between cells); format the column as a number with a dot, or as text",
				sep.many())
		}
		return msg
	}
	return "must not contain a comma: amounts must use a dot for decimals and no thousands separators: write 1234.56"
}

// Leading zeros.
//
// A column formatted as numbers drops leading zeros: routing number
// 011000015 becomes 11000015, ZIP code 02134 becomes 2134, and account
// 0123456789 becomes 123456789, which still looks like an account number.
// The routing number and the ZIP code show the damage; the account number
// cannot. So when a routing number or a ZIP code of a file lost its zeros,
// no account number of that file can be trusted and the whole file is
// refused (see zeroDamage and Parse).

// lostZeroRouting reports a routing number of 7 or 8 digits that, with its
// zeros put back in front, is a valid ABA routing number.
func lostZeroRouting(s string) bool {
	return (len(s) == 7 || len(s) == 8) && isDigits(s) && abaValid(strings.Repeat("0", 9-len(s))+s)
}

// lostZeroZip reports a ZIP code of 3 or 4 digits: a five-digit ZIP code
// starting with 0 (New England, New Jersey, Puerto Rico) or 00.
func lostZeroZip(s string) bool {
	return (len(s) == 3 || len(s) == 4) && isDigits(s)
}

// zeroExamples is how many lines the file-level verdict names.
const zeroExamples = 5

// zeroCell is a routing number or ZIP code that lost its leading zeros.
type zeroCell struct {
	line   int
	column int
	shown  string // the cell as a message may show it: a routing number masked
	digits int
}

// zeroDamage collects the cells of a file whose leading zeros a spreadsheet
// dropped.
type zeroDamage struct {
	n     int
	first zeroCell
	lines []int // the distinct lines of the first cells, at most zeroExamples
	more  bool  // a line is left out of lines
}

func (z *zeroDamage) add(c zeroCell) {
	if z.n == 0 {
		z.first = c
	}
	z.n++
	switch {
	case len(z.lines) > 0 && z.lines[len(z.lines)-1] == c.line:
	case len(z.lines) < zeroExamples:
		z.lines = append(z.lines, c.line)
	default:
		z.more = true
	}
}

// err is the file-level verdict, or nil when no cell lost its zeros.
func (z *zeroDamage) err() error {
	if z.n == 0 {
		return nil
	}
	c := z.first
	var cell string
	if c.column == colZip {
		cell = fmt.Sprintf("ZIP code %s has %d digits instead of 5: a spreadsheet dropped its leading zero. ", c.shown, c.digits)
	} else {
		cell = fmt.Sprintf("routing number %s has %d digits instead of 9: a spreadsheet dropped its leading zero "+
			"(with it, it is a valid routing number). ", c.shown, c.digits)
	}
	var b strings.Builder
	if z.n > 1 {
		fmt.Fprintf(&b, "%d routing numbers and ZIP codes of this file lost leading zeros (lines %s). ",
			z.n, ExampleLines(z.lines, z.more))
	}
	b.WriteString("Account numbers in the same file may have lost their leading zeros too, and a wrong account " +
		"number pays the wrong account, so every row of this file is refused. In the spreadsheet, format the " +
		"bank_routing, bank_account and zip columns as text, re-enter the numbers with their leading zeros, " +
		"and save the file again.")
	return &FileError{Line: c.line, Column: payment.Fields[c.column].Name, Restates: cell, Reason: b.String(), Damaged: true}
}

// lostZeroMessage is the finding on a routing number or ZIP code that lost
// its leading zeros.
func lostZeroMessage(n, want int, what string) string {
	return fmt.Sprintf("has %d digits instead of %d: a spreadsheet dropped the leading zero of this %s, and "+
		"account numbers in the file may have lost theirs too; format the column as text and re-enter the numbers",
		n, want, what)
}

// Rounded accounts.
//
// A spreadsheet keeps 15 significant digits of a number: account
// 12345678901234567 typed into a number column becomes 12345678901234600.

// spreadsheetDigits is the precision of a spreadsheet's numbers.
const spreadsheetDigits = 15

// roundedAccount reports an account of 16 or 17 digits whose digits past
// the 15th are all 0.
func roundedAccount(s string) bool {
	return len(s) > spreadsheetDigits && isDigits(s) && strings.Trim(s[spreadsheetDigits:], "0") == ""
}

func roundedAccountMessage(s, column string) string {
	last := "the last digit is 0"
	if n := len(s) - spreadsheetDigits; n > 1 {
		last = fmt.Sprintf("the last %d digits are 0", n)
	}
	return fmt.Sprintf("looks rounded by a spreadsheet: it has %d digits and %s, as happens when a spreadsheet "+
		"keeps only %d digits of a number. Format the %s column as text before typing or pasting, "+
		"and re-enter the account numbers", len(s), last, spreadsheetDigits, column)
}

// Lost letters.
//
// Saved in an encoding that cannot hold a letter (Windows-1252, Excel's
// plain "CSV" on a Western system, holds no Polish, Vietnamese, Cyrillic or
// Chinese letters), a spreadsheet writes "?" instead: Müller stays Müller
// in Windows-1252, but Łukasz becomes ?ukasz and 王小明 becomes ???. The
// row can still be paid, so this is a warning.

// lossyColumns are the text columns checked for letters turned into "?";
// name is checked strictly (see lossyText).
var lossyColumns = []int{colName, colMemo, colAddress, colCity}

// lossyText reports a "?" that stands where a letter should be. In a name,
// any "?" does. Elsewhere, a "?" between two letters (M?ller), at the start
// of a word before a letter (?ukasz), or a word starting with two or more
// (???), but not a "?" ending a word (Paid?), which may be a question.
func lossyText(s string, name bool) bool {
	i := strings.IndexByte(s, '?')
	if i < 0 {
		return false
	}
	if name {
		return true
	}
	var prev rune = ' '
	if i > 0 {
		prev, _ = utf8.DecodeLastRuneInString(s[:i])
	}
	for ; i < len(s); i++ {
		if s[i] != '?' || urlQuery(s, i) {
			prev, _ = utf8.DecodeRuneInString(s[i:])
			continue
		}
		next, _ := utf8.DecodeRuneInString(s[i+1:])
		wordStart := unicode.IsSpace(prev) || unicode.IsPunct(prev) && prev != '?'
		switch {
		case unicode.IsLetter(prev) && unicode.IsLetter(next):
			return true
		case wordStart && (unicode.IsLetter(next) || next == '?'):
			return true
		}
		prev = '?'
	}
	return false
}

// urlQuery reports a "?" at s[i] that starts the query of a web address
// (https://x.example/p?x=1, www.example.com/?a=b): a "?" followed by a
// parameter name and "=", in a word (text between spaces) that holds "://"
// or starts with "www.". A letter an export lost is never followed by
// "name=" inside such a word.
func urlQuery(s string, i int) bool {
	start := strings.LastIndexFunc(s[:i], unicode.IsSpace) + 1
	word := s[start:]
	if end := strings.IndexFunc(word, unicode.IsSpace); end >= 0 {
		word = word[:end]
	}
	if !strings.Contains(word, "://") && !strings.HasPrefix(strings.ToLower(word), "www.") {
		return false
	}
	name, _, ok := strings.Cut(s[i+1:], "=")
	return ok && name != "" && !strings.ContainsFunc(name, func(r rune) bool {
		return !(r < utf8.RuneSelf && (isLetter(byte(r)) || r >= '0' && r <= '9' || strings.ContainsRune("_-.~%[]", r)))
	})
}

const lossyMessage = `has a "?" where a letter should be: the file was saved in an encoding that cannot hold ` +
	`every letter (such as Windows-1252, Excel's plain "CSV"), which writes "?" instead. The row is accepted as ` +
	`it is, "?" included; save the sheet as "CSV UTF-8" so that names keep their letters`

// Windows-1252.
//
// Excel's plain "CSV" and LibreOffice with a Western character set save in
// Windows-1252: é is the single byte E9, which is not UTF-8.

// win1252 maps the bytes 0x80-0x9F of Windows-1252; 0 marks a byte the
// encoding leaves undefined. Bytes 0xA0-0xFF are Latin-1, the same code
// point.
var win1252 = [32]rune{
	'€', 0, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0, 'Ž', 0,
	0, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0, 'ž', 'Ÿ',
}

// fromWin1252 decodes s as Windows-1252, or reports false when s holds a
// byte that Windows-1252 leaves undefined.
func fromWin1252(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x80:
			b.WriteByte(c)
		case c < 0xA0:
			r := win1252[c-0x80]
			if r == 0 {
				return "", false
			}
			b.WriteRune(r)
		default:
			b.WriteRune(rune(c))
		}
	}
	return b.String(), true
}

// invalidUTF8Reason explains a cell that is not UTF-8. column is the cell's
// column ("" when not known, a header cell for the header); sensitive cells
// are masked.
func invalidUTF8Reason(cell, column string, sensitive bool) string {
	const fix = "; save the file as CSV UTF-8"
	text, ok := fromWin1252(strings.TrimSpace(cell))
	if !ok {
		return "invalid UTF-8 text" + fix
	}
	shown := clip(text)
	if sensitive || column == "" && countDigits(text) >= 4 {
		shown = redact.Account(text)
	}
	return fmt.Sprintf("invalid UTF-8 text: the file looks saved as Windows-1252 (Excel's plain \"CSV\", or a "+
		"Western character set), in which this cell reads %q%s", shown, fix)
}

func countDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
}

// ExampleLines lists the lines a file-level finding gives as examples:
// "2, 5, 9", then " and more" when more were found than listed.
func ExampleLines(lines []int, more bool) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strconv.Itoa(l)
	}
	s := strings.Join(out, ", ")
	if more {
		s += " and more"
	}
	return s
}
