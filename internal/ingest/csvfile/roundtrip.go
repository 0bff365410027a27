package csvfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/batchd/batchd/internal/money"
)

// Spreadsheet round trips.
//
// A payment file opened in a spreadsheet and saved again (a double-click,
// then Save) has every column of digits turned into numbers: account
// 0001234567 comes back as 1234567, a valid-looking account of someone
// else. Nothing in that cell shows it. What shows it is the rest of the
// file: the spreadsheet also wrote the amounts as numbers (1086.30 as
// 1086.3, 2500.00 as 2500), long numbers in scientific notation, and
// dates in its own format. roundTrip gathers those signs while the rows
// are read, and the shape of each identifier column, and heldForRoundTrip
// is the rule that decides.

// roundTripIDs are the identifier columns whose leading zeros nothing in
// the cell would show lost. A routing number (9 digits) and a ZIP code (5)
// have fixed lengths, so a lost zero shows in the cell itself: see
// zeroDamage.
var roundTripIDs = []string{"bank_account", "number"}

// sciColumns are the number-like columns in which a spreadsheet writes a
// long number in scientific notation (1.23457E+11).
var sciColumns = []string{"number", "amount", "bank_account", "bank_routing", "zip", "phone"}

// dateColumns hold dates written YYYY-MM-DD.
var dateColumns = []string{"authorization_date", "recurring_start_date"}

// clue is the first cell that shows a sign: line 0 when none did.
type clue struct {
	line          int
	column, value string // value as a message may show it (masked where sensitive)
}

// note keeps cell s (masked when sensitive) if it is the first.
func (c *clue) note(line int, column, s string, sensitive bool) {
	if c.line != 0 {
		return
	}
	shown := clip(s)
	if sensitive {
		shown = MaskAccount(s)
	}
	*c = clue{line, column, shown}
}

// idShape is what a file's unquoted digit-only values of one identifier
// column look like.
type idShape struct {
	n              int
	minLen, maxLen int
	zero           bool // a value starts with 0: the column kept its zeros
}

// roundTrip gathers the signs of a spreadsheet round trip in a file, one
// record at a time, in memory that does not grow with the file.
type roundTrip struct {
	decimals [3]clue // the first amount with 0, 1 and 2 decimals
	keptZero clue    // the first amount whose second decimal is 0 (12.50): no spreadsheet's default
	sci      clue    // the first number in scientific notation
	date     clue    // the first date in a spreadsheet's format
	ids      [2]idShape
	starts   []textPos // the record's field starts, reused
	quoted   []bool    // which of them are quoted, reused
}

// note reads one record: cell i is in the column named by column(len(raw),
// i) ("" when it has none), and quoted[i] says whether the file had it in
// quotes.
func (t *roundTrip) note(raw []string, line int, column ColumnNamer, quoted []bool) {
	for i, cell := range raw {
		name, sensitive := column(len(raw), i)
		if name == "" {
			continue
		}
		s := strings.TrimSpace(cell)
		if name == "amount" {
			if d, ok := amountDecimals(s); ok && payable(s) {
				t.decimals[d].note(line, name, s, sensitive)
				if d == 2 && strings.HasSuffix(s, "0") {
					t.keptZero.note(line, name, s, sensitive)
				}
			}
		}
		if t.sci.line == 0 && slices.Contains(sciColumns, name) && scientific(s) {
			t.sci.note(line, name, s, sensitive)
		}
		if t.date.line == 0 && slices.Contains(dateColumns, name) && spreadsheetDate(s) {
			t.date.note(line, name, s, sensitive)
		}
		for k, id := range roundTripIDs {
			if name == id && !quoted[i] && validID(id, s) {
				t.ids[k].add(s)
			}
		}
	}
}

// payable reports an amount the amount rule accepts (money.Parse, above
// 0): a refused amount says nothing about how the file was saved.
func payable(s string) bool {
	c, err := money.Parse(s)
	return err == nil && c > 0
}

// validID reports a value that the column's own rule accepts: a value
// refused anyway says nothing about the column.
func validID(column, s string) bool {
	if column == "number" {
		return cellRules[colNumber].check(nil, s) == ""
	}
	return accountDigits(nil, s) == ""
}

func (sh *idShape) add(s string) {
	if sh.n == 0 || len(s) < sh.minLen {
		sh.minLen = len(s)
	}
	sh.maxLen = max(sh.maxLen, len(s))
	sh.zero = sh.zero || s[0] == '0'
	sh.n++
}

// mayHaveLostZeros says whether a spreadsheet may have dropped leading
// zeros from the column: its unquoted values of digits, none starting
// with 0, are of different lengths.
func (sh idShape) mayHaveLostZeros() bool {
	return sh.n > 0 && !sh.zero && sh.minLen != sh.maxLen
}

// heldForRoundTrip is the rule: the whole file is refused when it shows
// that a spreadsheet saved it AND an identifier column may have lost
// leading zeros in doing so. It returns nil otherwise.
//
// A spreadsheet shows itself by:
//   - an amount with one decimal (1086.3): a payroll or ERP export writes
//     two (1086.30); a spreadsheet drops the trailing zero;
//   - whole amounts beside amounts with decimals (2500 and 312.45): a
//     system writes every amount alike (2500.00); unless an amount kept a
//     trailing zero (12.50), which a spreadsheet would have dropped: then
//     a person typed the file, as people write 12 and 12.50;
//   - a number in scientific notation (1.23457E+11);
//   - a date in a spreadsheet's format (3/2/2026, 02.03.2026) where
//     YYYY-MM-DD belongs.
//
// An identifier column (bank_account, number) may have lost zeros when
// its values that are digits not in quotes (and valid for the column)
// are of different lengths and none starts with 0. So a file passes when
// its amounts are all whole or all have two decimals (typed by hand, or
// exported by a system), or when each identifier column is quoted, keeps
// a leading 0 somewhere, or is of fixed width (a single value included).
// Accounts that lost zeros but all have one length, or a file of one row,
// cannot be told from a file that never had zeros: the README says so.
func (t *roundTrip) heldForRoundTrip() error {
	signs := t.signs()
	var ids []string
	for k, sh := range t.ids {
		if sh.mayHaveLostZeros() {
			ids = append(ids, describeIDColumn(roundTripIDs[k], sh))
		}
	}
	if len(signs) == 0 || len(ids) == 0 {
		return nil
	}
	first := signs[0]
	var b strings.Builder
	b.WriteString("this file looks saved by a spreadsheet: ")
	b.WriteString(first.why)
	for _, s := range signs[1:] {
		fmt.Fprintf(&b, "; and on line %d, %s", s.line, s.why)
	}
	fmt.Fprintf(&b, ". A spreadsheet also turns a column of digits into numbers and drops their leading zeros "+
		"(account 0076543210 becomes 76543210, another valid-looking account): %s. Such numbers may have lost "+
		"their leading zeros and would pay the wrong account, so every row of this file is refused and nothing "+
		"in it is paid. Re-export the file from the system that made it, without opening it "+
		"in a spreadsheet; or send the sheet as XLSX with the %s formatted as Text and the numbers re-entered with "+
		"their leading zeros.", strings.Join(ids, "; "), idColumnWords(t))
	return &FileError{Line: first.line, Column: first.column, Reason: b.String(), Damaged: true}
}

// sign is a clue with what it gives away.
type sign struct {
	clue
	why string
}

// signs lists the signs found, the most telling first.
func (t *roundTrip) signs() []sign {
	var out []sign
	whole, one, two := t.decimals[0], t.decimals[1], t.decimals[2]
	if one.line > 0 {
		out = append(out, sign{one, fmt.Sprintf("amount %s has one decimal; a payroll or ERP export "+
			"writes two (%s0), a spreadsheet drops the trailing zero", one.value, one.value)})
	}
	if decimal := two; whole.line > 0 && (two.line > 0 || one.line > 0) && t.keptZero.line == 0 {
		if decimal.line == 0 {
			decimal = one
		}
		out = append(out, sign{whole, fmt.Sprintf("amount %s has no decimals while %s on line %d has "+
			"some; a system writes every amount alike (%s.00), a spreadsheet drops the zeros",
			whole.value, decimal.value, decimal.line, whole.value)})
	}
	if c := t.sci; c.line > 0 {
		out = append(out, sign{c, fmt.Sprintf("%s %s is in scientific notation, as a spreadsheet "+
			"writes a long number", c.column, c.value)})
	}
	if c := t.date; c.line > 0 {
		out = append(out, sign{c, fmt.Sprintf("%s %s is a date in a spreadsheet's format, not "+
			"YYYY-MM-DD", c.column, c.value)})
	}
	return out
}

// describeIDColumn says why an identifier column may have lost zeros.
func describeIDColumn(name string, sh idShape) string {
	return fmt.Sprintf("the %s column holds numbers of %d to %d digits, not in quotes and none starting with 0",
		name, sh.minLen, sh.maxLen)
}

// idColumnWords names the identifier columns in the advice.
func idColumnWords(t *roundTrip) string {
	var names []string
	for k, sh := range t.ids {
		if sh.mayHaveLostZeros() {
			names = append(names, roundTripIDs[k])
		}
	}
	if len(names) == 1 {
		return names[0] + " column"
	}
	return strings.Join(names, " and ") + " columns"
}

// amountDecimals is the number of decimals of a plain amount (12, 12.5,
// 12.25), or false for anything else.
func amountDecimals(s string) (int, bool) {
	whole, frac, dot := strings.Cut(s, ".")
	if !isDigits(whole) || dot && (len(frac) < 1 || len(frac) > 2 || !isDigits(frac)) {
		return 0, false
	}
	return len(frac), true
}

// scientific reports a number in a spreadsheet's scientific notation:
// 1.23457E+11, 1E+15, 4.4e10.
func scientific(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return false
	}
	mant, exp, ok := s[:i], s[i+1:], true
	whole, frac, dot := strings.Cut(mant, ".")
	exp = strings.TrimLeft(exp, "+-")
	return ok && len(whole) == 1 && isDigits(whole) && (!dot || isDigits(frac)) && isDigits(exp)
}

// spreadsheetDate reports a date written day and month first (either
// order), with slashes, dots or dashes, as spreadsheets show dates:
// 3/2/2026, 03/02/26, 02.03.2026, 2-3-2026. YYYY-MM-DD is not one: its
// first part has four digits.
func spreadsheetDate(s string) bool {
	for _, sep := range []string{"/", ".", "-"} {
		day, rest, ok1 := strings.Cut(s, sep)
		month, year, ok2 := strings.Cut(rest, sep)
		if ok1 && ok2 && len(day) <= 2 && len(month) <= 2 && (len(year) == 2 || len(year) == 4) &&
			isDigits(day) && isDigits(month) && isDigits(year) {
			return true
		}
	}
	return false
}

// noteRoundTrip hands a record to the round-trip signs, with which of its
// cells were quoted, when Parse asked for them.
func (rs *Records) noteRoundTrip(raw []string, line int) {
	if rs.trip == nil || rs.column == nil {
		return
	}
	t := rs.trip
	t.starts = t.starts[:0]
	for i := range raw {
		line, col := rs.cr.FieldPos(i)
		t.starts = append(t.starts, textPos{line, col})
	}
	t.quoted = rs.marks.quoted(t.starts, rs.nextLine, t.quoted)
	t.note(raw, line, rs.column, t.quoted)
}

// heldForRoundTrip is the round-trip rule's verdict on the records read
// (see roundTrip.heldForRoundTrip), or nil when they were not gathered.
func (rs *Records) heldForRoundTrip() error {
	if rs.trip == nil {
		return nil
	}
	return rs.trip.heldForRoundTrip()
}
