package csvfile

import (
	"strconv"
	"strings"
	"testing"
)

// roundTripFile is a payment file with the given amounts and accounts (one
// row each, in order), written as text: cells are as given, quotes
// included.
func roundTripFile(amounts, accounts []string, extra string) string {
	var b strings.Builder
	b.WriteString("number,amount,memo,name,email,bank_routing,bank_account" + extra + "\n")
	for i := range amounts {
		b.WriteString(strings.Join([]string{string(rune('1' + i)), amounts[i], "Invoice", "Ann Smith",
			"ann@example.com", "999900001", accounts[i]}, ","))
		if extra != "" {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestRoundTripRule(t *testing.T) {
	varying := []string{"1234567", "987654321", "4400123456"}
	for _, c := range []struct {
		name     string
		amounts  []string
		accounts []string
		held     string // "" when the file passes, else the line and column of the verdict
	}{
		{"one decimal, varying unquoted accounts", []string{"1086.3", "2500.00", "312.45"}, varying, "2:amount"},
		{"whole beside two decimals", []string{"312.45", "2500", "1086.25"}, varying, "3:amount"},
		{"whole beside a kept trailing zero (typed by hand)", []string{"12", "12.50", "312.45"}, varying, ""},
		{"whole beside one decimal", []string{"2500", "1086.3", "7"}, varying, "3:amount"},
		{"a single row", []string{"1086.3"}, []string{"1234567"}, ""},
		{"every amount two decimals", []string{"1086.30", "2500.00", "312.45"}, varying, ""},
		{"every amount whole (typed by hand)", []string{"12", "2500", "7"}, varying, ""},
		{"accounts quoted", []string{"1086.3", "2500", "312.45"}, []string{`"0001234567"`, `"0987654321"`, `"4400123456"`}, ""},
		{"accounts quoted, no zero", []string{"1086.3", "2500", "312.45"}, []string{`"1234567"`, `"987654321"`, `"4400123456"`}, ""},
		{"accounts of fixed width", []string{"1086.3", "2500", "312.45"}, []string{"1234567890", "9876543210", "4400123456"}, ""},
		{"an account keeps its zero", []string{"1086.3", "2500", "312.45"}, []string{"0001234567", "987654321", "4400123456"}, ""},
		{"one unquoted account among quoted ones", []string{"1086.3", "2500", "312.45"}, []string{`"0001234567"`, "987654321", "44001234"}, "2:amount"},
		{"refused amounts are no sign", []string{"0", "-5", "1.00"}, varying, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := parseString(roundTripFile(c.amounts, c.accounts, ""), testOpts())
			if c.held == "" {
				if res.err != nil {
					t.Fatalf("held: %v", res.err)
				}
				return
			}
			fe := mustFileError(t, res.err)
			if got := strings.Join([]string{itoa(fe.Line), fe.Column}, ":"); got != c.held || !fe.Damaged {
				t.Errorf("verdict at %s (damaged %v), want %s: %v", got, fe.Damaged, c.held, fe)
			}
			for _, want := range []string{"this file looks saved by a spreadsheet", "the bank_account column holds numbers",
				"every row of this file is refused", "Re-export the file from the system that made it",
				"send the sheet as XLSX with the bank_account column formatted as Text"} {
				if !strings.Contains(fe.Error(), want) {
					t.Errorf("verdict lacks %q: %v", want, fe)
				}
			}
			for _, a := range c.accounts {
				if len(a) >= 7 && strings.Contains(fe.Error(), strings.Trim(a, `"`)) {
					t.Errorf("verdict shows account %s: %v", a, fe)
				}
			}
		})
	}
}

func TestRoundTripSigns(t *testing.T) {
	accounts := []string{"1234567", "987654321"}
	// A number in scientific notation, and a date in a spreadsheet's format.
	res := parseString("number,amount,memo,name,email,bank_routing,bank_account,authorization_date\n"+
		"1,10.00,Invoice,Ann,a@example.com,999900001,"+accounts[0]+",2025-06-14\n"+
		"2,20.00,Invoice,Bob,b@example.com,999900001,"+accounts[1]+",6/14/2025\n"+
		"3,30.00,Invoice,Cy,c@example.com,999900001,4.4E+10,\n", testOpts())
	fe := mustFileError(t, res.err)
	if fe.Line != 4 || fe.Column != "bank_account" || !strings.Contains(fe.Error(), "bank_account ****+10 is in scientific notation") ||
		!strings.Contains(fe.Error(), "and on line 3, authorization_date 6/14/2025 is a date in a spreadsheet's format") {
		t.Errorf("verdict %v", fe)
	}
	// The check number column, of varying lengths, is named too.
	res = parseString("number,amount,memo,name,email,bank_routing,bank_account\n"+
		"7,10.5,Invoice,Ann,a@example.com,999900001,1234567890\n"+
		"1001,20.00,Invoice,Bob,b@example.com,999900001,9876543210\n", testOpts())
	fe = mustFileError(t, res.err)
	if !strings.Contains(fe.Error(), "the number column holds numbers of 1 to 4 digits") ||
		strings.Contains(fe.Error(), "the bank_account column") || !strings.Contains(fe.Error(), "with the number column formatted as Text") {
		t.Errorf("verdict %v", fe)
	}
	for _, s := range []string{"1.23457E+11", "1E+15", "4.4e10"} {
		if !scientific(s) {
			t.Errorf("scientific(%q) = false", s)
		}
	}
	for _, s := range []string{"1234", "12.5", "E5", "1.2.3E4", "12E4"} {
		if scientific(s) {
			t.Errorf("scientific(%q) = true", s)
		}
	}
	for s, want := range map[string]bool{"3/2/2026": true, "03/02/26": true, "02.03.2026": true, "2026-03-02": false,
		"1.5": false, "3/2": false, "2026/03/02": false, "2-3-2026": true, "2026-3-2": false, "1-2": false} {
		if spreadsheetDate(s) != want {
			t.Errorf("spreadsheetDate(%q) != %v", s, want)
		}
	}
}

// TestRoundTripLibreOffice runs the rule on the files LibreOffice 7.4 wrote
// (testdata/spreadsheet/make.sh): the re-saved CSV whose accounts lost
// their zeros is held, naming line 2's amount and the bank_account column;
// the source export and the quoted semicolon and tab exports pass.
func TestRoundTripLibreOffice(t *testing.T) {
	res := parseFile(t, "spreadsheet/resaved.csv", testOpts())
	fe := mustFileError(t, res.err)
	if !fe.Damaged || fe.Line != 2 || fe.Column != "amount" {
		t.Errorf("FileError = %+v", fe)
	}
	for _, want := range []string{
		"line 2, column amount: this file looks saved by a spreadsheet: amount 1086.3 has one decimal; a payroll or ERP export writes two (1086.30)",
		"and on line 3, amount 2500 has no decimals while 312.45 on line 4 has some",
		"the bank_account column holds numbers of 7 to 10 digits, not in quotes and none starting with 0",
	} {
		if !strings.Contains(fe.Error(), want) {
			t.Errorf("verdict lacks %q:\n%v", want, fe)
		}
	}
	if strings.Contains(fe.Error(), "1234567") || strings.Contains(fe.Error(), "987654321") {
		t.Errorf("verdict shows an account: %v", fe)
	}
	semi, tab := testOpts(), testOpts()
	semi.Delimiter, tab.Delimiter = ";", "\t"
	for name, o := range map[string]Options{"spreadsheet/source.csv": testOpts(),
		"spreadsheet/semicolon-quoted.csv": semi, "spreadsheet/tab.csv": tab} {
		res := parseFile(t, name, o)
		if res.err != nil || res.sum != (Summary{Rows: 3, Valid: 3}) {
			t.Errorf("%s: %+v, %v", name, res.sum, res.err)
		}
		if name != "spreadsheet/source.csv" && res.rows[0].BankAccount != "0001234567" {
			t.Errorf("%s: account %s", name, MaskAccount(res.rows[0].BankAccount))
		}
	}
}

// TestQuoteMarksFollowPhysicalLines: quoted fields are told from their
// starts after a byte order mark, CRLF line ends, a quoted field spanning
// lines and a quote after a separator inside a quoted field.
func TestQuoteMarksFollowPhysicalLines(t *testing.T) {
	res := parseString("\xEF\xBB\xBFnumber,amount,memo,name,email,bank_routing,bank_account\r\n"+
		"1,10.5,\"two\r\nlines, \"\"x\"\",\"\"y\",Ann,a@example.com,999900001,\"1234567\"\r\n"+
		"2,20.00,memo,Bob,b@example.com,999900001,\"987654321\"\r\n", testOpts())
	if res.err != nil || res.sum.Valid != 2 {
		t.Fatalf("quoted accounts after a BOM and a quoted line break: %+v %v %v", res.sum, res.err, res.findings)
	}
	res = parseString("\xEF\xBB\xBFnumber,amount,memo,name,email,bank_routing,bank_account\r\n"+
		"1,10.5,\"two\r\nlines, \"\"x\"\",\"\"y\",Ann,a@example.com,999900001,1234567\r\n"+
		"2,20.00,memo,Bob,b@example.com,999900001,987654321\r\n", testOpts())
	if fe := mustFileError(t, res.err); fe.Line != 2 || fe.Column != "amount" {
		t.Fatalf("unquoted accounts: %v", fe)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
