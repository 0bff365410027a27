package csvfile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/money"
)

func TestValidFile(t *testing.T) {
	res := parseFile(t, "csv/valid.csv", testOpts())
	if res.err != nil {
		t.Fatal(res.err)
	}
	equal(t, "findings", res.where(), []string{})
	equal(t, "row lines", res.rowLines(), []int{2, 3, 4, 5, 6})
	if res.sum != (Summary{Rows: 5, Valid: 5}) {
		t.Errorf("summary = %+v", res.sum)
	}
	first, second, dues := res.rows[0], res.rows[1], res.rows[3]
	if first.Amount != 12500 || first.BankAccount != "1111000016" || !first.VerifyBeforeSave || first.FundConfirmation {
		t.Errorf("row 2 = %#v", first)
	}
	if second.Amount != money.Cents(4050) || second.State != "IL" || second.Email != "" || second.Memo != "Rent, June" {
		t.Errorf("row 3 = %+v", second)
	}
	if !dues.Recurring || dues.RecurringCycle != "month" || dues.RecurringInstallments != 12 || dues.Number != "" {
		t.Errorf("row 5 = %+v", dues)
	}
	if res.rows[2].RecurringStartDate != "" || !res.rows[2].FundConfirmation {
		t.Errorf("row 4 = %+v", res.rows[2])
	}

	live := testOpts()
	live.TestMode = false
	res = parseFile(t, "csv/valid.csv", live)
	equal(t, "live findings", res.where(), []string{"2:bank_routing", "3:bank_routing", "4:bank_routing", "5:bank_routing", "6:bank_routing"})
	if !strings.Contains(res.findings[0].Message, "sandbox test routing number") {
		t.Errorf("live message = %q", res.findings[0].Message)
	}
}

func TestExcelBOMAndCRLF(t *testing.T) {
	res := parseFile(t, "csv/excel_bom_crlf.csv", testOpts())
	if res.err != nil {
		t.Fatal(res.err)
	}
	equal(t, "findings", res.where(), []string{})
	// Line 4 holds only commas and the file ends with ",,,,,," and a blank line.
	equal(t, "row lines", res.rowLines(), []int{2, 3, 5})
	if res.sum.Rows != 3 {
		t.Errorf("rows = %d, want 3 (blank rows are not counted)", res.sum.Rows)
	}
	if p := res.rows[0]; p.Amount != 2500 || p.BankAccount != "1111000016" || p.Number != "7001" {
		t.Errorf("trimmed row = %+v", p)
	}
	if p := res.rows[2]; p.Name != "Jürgen Müller" || strings.ContainsAny(p.Memo, "\r\n") {
		t.Errorf("UTF-8 row = %+v", p)
	}
}

func TestQuotedNewlinesKeepPhysicalLines(t *testing.T) {
	res := parseFile(t, "csv/quoted_comma_newline.csv", testOpts())
	if res.err != nil {
		t.Fatal(res.err)
	}
	equal(t, "row lines", res.rowLines(), []int{2, 3, 7})
	equal(t, "findings", res.where(), []string{"6:amount", "9:amount"})
	if want := "Line one\nline two, with a comma\nand \"quoted\" line three"; res.rows[1].Memo != want {
		t.Errorf("memo = %q, want %q", res.rows[1].Memo, want)
	}
}

func TestUpperCaseHeaders(t *testing.T) {
	res := parseFile(t, "csv/upper_case_headers.csv", testOpts())
	if res.err != nil {
		t.Fatal(res.err)
	}
	equal(t, "findings", res.where(), []string{})
	equal(t, "row lines", res.rowLines(), []int{2, 3})
	if p := res.rows[1]; p.State != "TX" || p.Address != "1 Elm St" || p.VerifyBeforeSave {
		t.Errorf("row 3 = %+v", p)
	}
	if !res.rows[0].VerifyBeforeSave || res.rows[0].Number != "5001" {
		t.Errorf("row 2 = %+v", res.rows[0])
	}
}

func TestUnknownColumnRejectsFile(t *testing.T) {
	res := parseFile(t, "csv/unknown_column.csv", testOpts())
	fe := mustFileError(t, res.err)
	if fe.Line != 1 || fe.Column != "ammount" || !strings.Contains(fe.Reason, "did you mean amount") {
		t.Errorf("FileError = %+v", fe)
	}
	if len(res.rows)+len(res.findings) != 0 {
		t.Errorf("callbacks ran for a rejected header")
	}
}

func TestIgnoreColumns(t *testing.T) {
	in := "Amount,memo,name,email,bank_routing,bank_account, Notes ,cost center\n" +
		"10.00,a,Ann,ann@example.com,999900001,1111000016,call her,42\n"
	res := parseString(in, testOpts())
	fe := mustFileError(t, res.err)
	if fe.Column != "Notes" {
		t.Errorf("unknown column = %q, want Notes", fe.Column)
	}
	o := testOpts()
	o.IgnoreColumns = []string{"NOTES", " Cost Center"}
	res = parseString(in, o)
	if res.err != nil || len(res.rows) != 1 || res.rows[0].Memo != "a" {
		t.Errorf("with ignore list: rows %+v, err %v", res.rows, res.err)
	}
	o.IgnoreColumns = []string{"memo"}
	if _, err := Parse(strings.NewReader(in), o, nil, nil); err == nil || strings.Contains(err.Error(), "line") {
		t.Errorf("ignoring a field: err = %v, want a configuration error", err)
	}
}

func TestFileErrors(t *testing.T) {
	cases := []struct {
		name, in string
		line     int
		column   string
		reason   string
	}{
		{"empty", string(testdata(t, "csv/empty.csv")), 0, "", "empty file"},
		{"only blank lines", "\r\n\n\n", 0, "", "empty file"},
		{"only a BOM", "\xEF\xBB\xBF", 0, "", "empty file"},
		{"header only", string(testdata(t, "csv/header_only.csv")), 0, "", "no rows"},
		{"header and blank rows", "amount,memo,name,email,bank_routing,bank_account\n,,,,,\n  ,,,,,\n", 0, "", "no rows"},
		{"binary", string(testdata(t, "csv/binary.bin")), 3, "", "not a CSV text file"},
		{"utf16", "\xFF\xFEa\x00m\x00", 1, "", "UTF-16"},
		{"duplicate column", "amount,memo,Amount ,name\n", 1, "amount", "appears twice (columns 1 and 3)"},
		{"no header", "10.00,rent,Ann,a@b.co,999900001,1111000016\n", 1, "", "must be a header row"},
		{"unknown column with a digit", "amount,address2\n", 1, "address2", "unknown column"},
		{"missing columns", "amount,name,bank_routing\n1,a,999900001\n", 1, "", "memo; email or address; bank_routing and bank_account"},
		{"bare quote", "amount,memo,name,email,bank_routing,bank_account\n1,5\" disk,a,a@b.co,999900001,1111000016\n", 2, "", "quote"},
		{"unclosed quote", "amount,memo,name,email,bank_routing,bank_account\n1,\"open,a,a@b.co,999900001,1111000016\n2,x\n", 2, "", "not closed"},
		{"invalid utf8 in header", "amount,m\xe9mo\n", 1, "", "invalid UTF-8"},
		{"invalid utf8 in row", "amount,memo,name,email,bank_routing,bank_account\n1,ok,a,a@b.co,999900001,1111000016\n2,\"two\nlines \xe9\",a,a@b.co,999900001,1111000016\n", 4, "memo", "invalid UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := parseString(c.in, testOpts())
			fe := mustFileError(t, res.err)
			if fe.Line != c.line || fe.Column != c.column || !strings.Contains(fe.Reason, c.reason) {
				t.Errorf("FileError = %+v, want line %d column %q reason ~%q", fe, c.line, c.column, c.reason)
			}
		})
	}
}

func TestNULAfterSniffWindow(t *testing.T) {
	var b strings.Builder
	b.WriteString("amount,memo,name,email,bank_routing,bank_account\n")
	for i := range 40 {
		b.WriteString(csvLine(i))
	}
	b.WriteString("1.00,bad\x00memo,Ann,a@b.co,999900001,1111000016\n")
	res := parseString(b.String(), testOpts())
	fe := mustFileError(t, res.err)
	if fe.Line != 42 || !strings.Contains(fe.Reason, "not a CSV text file") {
		t.Errorf("FileError = %+v", fe)
	}
}

func csvLine(i int) string {
	return money.Cents(100+i).String() + ",memo,Ann,a@b.co,999900001,1111000016\n"
}

func TestInvalidRows(t *testing.T) {
	res := parseFile(t, "csv/invalid_rows.csv", testOpts())
	if res.err != nil {
		t.Fatal(res.err)
	}
	want := []string{
		"3:amount", "4:amount", "5:amount", "6:amount", "7:memo", "8:name",
		"9:memo", "9:name", "10:email", "11:email",
		"12:city", "12:state", "12:zip", "13:state", "13:zip",
		"14:bank_routing", "15:bank_routing", "16:bank_account", "17:bank_account", "18:bank_account",
		"19:token", "20:bank_routing", "21:store", "22:number",
		"23:authorization_date", "25:authorization_date", "26:authorization_date",
		"27:recurring_cycle", "27:recurring_installments", "28:recurring", "29:recurring_cycle",
		"30:recurring_cycle", "30:recurring_start_date", "30:recurring_installments",
		"31:verify_before_save", "31:fund_confirmation", "32:label", "32:phone", "33:", "35:bank_account",
	}
	equal(t, "findings", res.where(), want)
	equal(t, "row lines", res.rowLines(), []int{2, 24, 34, 36})
	if res.sum != (Summary{Rows: 35, Valid: 4, Invalid: 31}) {
		t.Errorf("summary = %+v", res.sum)
	}
	for _, f := range res.findings {
		if f.Message == "" {
			t.Errorf("finding without a reason: %+v", f)
		}
	}
	byWhere := map[string]Finding{}
	for _, f := range res.findings {
		byWhere[f.String()[:strings.Index(f.String(), ":")]] = f
	}
	checks := map[string]string{
		"line 4, column amount":              "comma",
		"line 5, column amount":              "currency symbol",
		"line 6, column amount":              "two decimal places",
		"line 35, column bank_account":       "apostrophe",
		"line 23, column authorization_date": "30 days",
		"line 33":                            "has 24 fields but the header has 23",
	}
	for w, sub := range checks {
		if f, ok := byWhere[w]; !ok || !strings.Contains(f.Message, sub) {
			t.Errorf("%s: finding %+v, want message containing %q", w, f, sub)
		}
	}
	if p := res.rows[3]; p.State != "OR" || p.Zip != "97201-1234" || p.Email != "" {
		t.Errorf("address row = %+v", p)
	}
	if p := res.rows[2]; p.Token == "" || p.Store != "batchd" || p.BankAccount != "" {
		t.Errorf("token row = %+v", p)
	}
}

func TestDuplicates(t *testing.T) {
	res := parseFile(t, "csv/duplicates.csv", testOpts())
	if res.err != nil {
		t.Fatal(res.err)
	}
	equal(t, "findings", res.where(), []string{"4:", "5:number", "7:", "9:number", "11:", "12:amount", "13:number"})
	equal(t, "row lines", res.rowLines(), []int{2, 3, 6, 8, 10})
	want := map[int]string{
		4:  "same payment as line 2",
		5:  "already used on line 2",
		7:  "same payment as line 6",
		9:  "already used on line 3",
		11: "same payment as line 10",
		13: "already used on line 12",
	}
	for _, f := range res.findings {
		if sub, ok := want[f.Line]; ok && !strings.Contains(f.Message, sub) {
			t.Errorf("line %d: %q, want %q", f.Line, f.Message, sub)
		}
	}
}

func TestDemoFiles(t *testing.T) {
	res := parseFile(t, "demo/payroll-clean.csv", testOpts())
	if res.err != nil || res.sum.Invalid != 0 || res.sum.Valid < 18 {
		t.Fatalf("payroll-clean: %+v %v %v", res.sum, res.where(), res.err)
	}
	accounts := map[string]bool{}
	verify := 0
	for _, p := range res.rows {
		accounts[p.BankAccount] = true
		if p.VerifyBeforeSave {
			verify++
		}
	}
	if !accounts["1111000005"] || !accounts["1111000016"] || verify == 0 {
		t.Errorf("payroll-clean lacks fixture 5, 16 or verify_before_save: %v, %d", accounts, verify)
	}
	res = parseFile(t, "demo/vendors-errors.csv", testOpts())
	if res.err != nil {
		t.Fatal(res.err)
	}
	equal(t, "vendors findings", res.where(), []string{"4:bank_routing", "5:memo", "6:email", "7:amount"})
	equal(t, "vendors rows", res.rowLines(), []int{2, 3, 8})
}

// Spreadsheet exports. Each file in testdata/csv below is written the way a
// spreadsheet exports it; see spreadsheet.go.

func TestSemicolonFile(t *testing.T) {
	// Read with commas (the default): the header is one unknown column.
	res := parseFile(t, "csv/semicolons.csv", testOpts())
	fe := mustFileError(t, res.err)
	want := `line 1: this file uses semicolons between cells; save it as CSV with commas, or set ingest.delimiter: ";"`
	if fe.Error() != want || fe.Damaged {
		t.Errorf("FileError = %q, want %q", fe, want)
	}
	if len(res.rows)+len(res.findings) != 0 {
		t.Error("callbacks ran for a refused header")
	}

	// With ingest.delimiter: ";" the rows are read; amounts still need a dot.
	o := testOpts()
	o.Delimiter = ";"
	res = parseFile(t, "csv/semicolons.csv", o)
	if res.err != nil {
		t.Fatal(res.err)
	}
	equal(t, "findings", res.where(), []string{"3:amount", "5:amount"})
	equal(t, "row lines", res.rowLines(), []int{2, 4})
	if res.sum != (Summary{Rows: 4, Valid: 2, Invalid: 2}) {
		t.Errorf("summary = %+v", res.sum)
	}
	if f := res.findings[0]; f.Value != "1234,56" ||
		!strings.Contains(f.Message, "amounts must use a dot for decimals: write 1234.56, not 1234,56") ||
		!strings.Contains(f.Message, "semicolons") {
		t.Errorf("decimal comma: %+v", f)
	}
	if f := res.findings[1]; f.Value != "1.234,56" || !strings.Contains(f.Message, "must use a dot") {
		t.Errorf("thousands and decimal comma: %+v", f)
	}
	if p := res.rows[1]; p.Memo != "Catering; lunch" || p.Amount != 4050 || p.BankAccount != "1111000020" {
		t.Errorf("quoted semicolon: %+v", p)
	}

	// A tab configured, a semicolon file given.
	o.Delimiter = "\t"
	fe = mustFileError(t, parseFile(t, "csv/semicolons.csv", o).err)
	if !strings.Contains(fe.Reason, `uses semicolons between cells, but ingest.delimiter: "\t" is set`) ||
		!strings.Contains(fe.Reason, `set ingest.delimiter: ";"`) {
		t.Errorf("tab set, semicolons given: %v", fe)
	}
}

func TestTabFile(t *testing.T) {
	fe := mustFileError(t, parseFile(t, "csv/tabs.csv", testOpts()).err)
	if want := `this file uses tabs between cells; save it as CSV with commas, or set ingest.delimiter: "\t"`; fe.Reason != want {
		t.Errorf("reason = %q, want %q", fe.Reason, want)
	}
	o := testOpts()
	o.Delimiter = "\t"
	res := parseFile(t, "csv/tabs.csv", o)
	if res.err != nil || len(res.findings) != 0 {
		t.Fatalf("err %v, findings %v", res.err, res.findings)
	}
	equal(t, "row lines", res.rowLines(), []int{2, 3})
	if p := res.rows[0]; p.Memo != "Office supplies, May" || p.Amount != 2500 {
		t.Errorf("row 2 = %+v", p)
	}
	if p := res.rows[1]; p.Name != "Jürgen Müller" || p.Amount != 13000 {
		t.Errorf("row 3 = %+v", p)
	}
}

func TestCommaFileWithSemicolonSetting(t *testing.T) {
	o := testOpts()
	o.Delimiter = ";"
	fe := mustFileError(t, parseFile(t, "csv/valid.csv", o).err)
	if !strings.Contains(fe.Reason, `this file uses commas between cells, but ingest.delimiter: ";" is set`) ||
		!strings.Contains(fe.Reason, "a comma is the default") {
		t.Errorf("reason = %q", fe.Reason)
	}
	o.Delimiter = "|"
	if _, err := Parse(strings.NewReader(csvOf(baseRow())), o, nil, nil); err == nil || !strings.Contains(err.Error(), "Delimiter") {
		t.Errorf("delimiter |: err = %v, want a configuration error", err)
	}
}

// TestLostLeadingZeros: a routing number or a ZIP code that lost its leading
// zero refuses the whole file, because the file's account numbers may have
// lost theirs too; each such cell is also a finding of its row.
func TestLostLeadingZeros(t *testing.T) {
	live := testOpts()
	live.TestMode = false
	res := parseFile(t, "csv/lost_zeros.csv", live)
	fe := mustFileError(t, res.err)
	if !fe.Damaged || fe.Line != 2 || fe.Column != "zip" {
		t.Errorf("FileError = %+v", fe)
	}
	for _, sub := range []string{
		"ZIP code 2134 has 4 digits instead of 5: a spreadsheet dropped its leading zero",
		"4 routing numbers and ZIP codes of this file lost leading zeros (lines 2, 4)",
		"Account numbers in the same file may have lost their leading zeros too",
		"every row of this file is refused",
		"format the bank_routing, bank_account and zip columns as text",
	} {
		if !strings.Contains(fe.Error(), sub) {
			t.Errorf("error lacks %q:\n%s", sub, fe.Error())
		}
	}
	equal(t, "findings", res.where(), []string{"2:zip", "2:bank_routing", "4:zip", "4:bank_routing"})
	equal(t, "values", values(res.findings), []string{"2134", "****0015", "7102", "****0339"})
	for _, f := range res.findings {
		if !strings.Contains(f.Message, "a spreadsheet dropped the leading zero") || !strings.Contains(f.Message, "account numbers") {
			t.Errorf("finding %v", f)
		}
	}
	if strings.Contains(fe.Error(), "11000015") {
		t.Errorf("verdict shows the routing number unmasked: %v", fe)
	}

	res = parseFile(t, "csv/lost_zeros_zip.csv", live)
	fe = mustFileError(t, res.err)
	if !fe.Damaged || fe.Line != 3 || fe.Column != "zip" || !strings.Contains(fe.Error(), "ZIP code 2108") {
		t.Errorf("ZIP codes only: %+v", fe)
	}

	// A routing number of 8 digits that is no routing number with a 0 in
	// front is a typo, refused with its row only.
	res = parseString(csvOf(with(map[string]string{"bank_routing": "02100002"})), live)
	if res.err != nil || len(res.findings) != 1 || strings.Contains(res.findings[0].Message, "spreadsheet") {
		t.Errorf("8-digit typo: err %v, findings %v", res.err, res.findings)
	}
}

func TestRoundedAccounts(t *testing.T) {
	res := parseFile(t, "csv/rounded_accounts.csv", testOpts())
	// The account in scientific notation shows a spreadsheet saved the
	// file, and its accounts are unquoted numbers of several lengths: the
	// round-trip rule refuses the whole file (roundtrip.go).
	fe := mustFileError(t, res.err)
	if !fe.Damaged || fe.Line != 5 || fe.Column != "bank_account" || !strings.Contains(fe.Reason, "scientific notation") {
		t.Errorf("FileError = %+v", fe)
	}
	equal(t, "findings", res.where(), []string{"2:bank_account", "3:bank_account", "5:bank_account"})
	equal(t, "row lines", res.rowLines(), []int{4, 6})
	equal(t, "values", values(res.findings), []string{"****4600", "****7650", "****E+16"})
	want := []string{
		"looks rounded by a spreadsheet: it has 17 digits and the last 2 digits are 0",
		"looks rounded by a spreadsheet: it has 16 digits and the last digit is 0",
		"scientific notation",
	}
	for i, f := range res.findings {
		if !strings.Contains(f.Message, want[i]) {
			t.Errorf("line %d: %q, want %q", f.Line, f.Message, want[i])
		}
	}
	for _, f := range res.findings[:2] {
		if !strings.Contains(f.Message, "Format the bank_account column as text before typing or pasting, and re-enter") {
			t.Errorf("line %d: no fix in %q", f.Line, f.Message)
		}
	}
	if res.rows[0].BankAccount != "12345678901234567" {
		t.Errorf("17 digits typed as text: %+v", res.rows[0])
	}
}

// TestQuestionMarkNames: letters an export could not encode became "?": a
// warning in the report, and the row stays valid.
func TestQuestionMarkNames(t *testing.T) {
	res := parseFile(t, "csv/question_marks.csv", testOpts())
	if res.err != nil {
		t.Fatal(res.err)
	}
	if res.sum != (Summary{Rows: 6, Valid: 6, Warnings: 5}) {
		t.Errorf("summary = %+v", res.sum)
	}
	equal(t, "row lines", res.rowLines(), []int{2, 3, 4, 5, 6, 7})
	equal(t, "warnings", res.where(), []string{"2:name", "3:name", "4:name", "5:memo", "7:name"})
	equal(t, "values", values(res.findings), []string{"?ukasz Nowak", "Nguy?n V?n An", "???", "Beratung f?r M?ller GmbH", "Jos? Garc?a"})
	for _, f := range res.findings {
		if f.Severity != Warning || !strings.Contains(f.Message, `save the sheet as "CSV UTF-8"`) ||
			!strings.HasPrefix(f.String(), fmt.Sprintf("line %d, column %s: warning: ", f.Line, f.Column)) {
			t.Errorf("finding %+v: %s", f, f)
		}
	}
	if res.rows[0].Name != "?ukasz Nowak" {
		t.Errorf("the name is stored as written: %q", res.rows[0].Name)
	}
}

func TestLossyText(t *testing.T) {
	cases := []struct {
		s    string
		name bool
		want bool
	}{
		{"M?ller", false, true},
		{"?ukasz Nowak", false, true},
		{"Pay ??? now", false, true},
		{"???", false, true},
		{"Paid?", false, false},
		{"Paid? Call back", false, false},
		{"Really??", false, false},
		{"Invoice ? 12", false, false},
		{"Müller", false, false},
		{"Jos?", true, true},
		{"?", true, true},
		{"Ann Smith", true, false},
	}
	for _, c := range cases {
		if got := lossyText(c.s, c.name); got != c.want {
			t.Errorf("lossyText(%q, name %v) = %v, want %v", c.s, c.name, got, c.want)
		}
	}
}

// TestWindows1252File: Excel's plain "CSV" writes Windows-1252; the file is
// refused, and the message shows the cell as that encoding reads it.
func TestWindows1252File(t *testing.T) {
	res := parseFile(t, "csv/windows1252.csv", testOpts())
	fe := mustFileError(t, res.err)
	if fe.Line != 3 || fe.Column != "memo" || !strings.Contains(fe.Reason, "Windows-1252") ||
		!strings.Contains(fe.Reason, `"Beratung – Juni"`) || !strings.HasSuffix(fe.Reason, "save the file as CSV UTF-8") {
		t.Errorf("FileError = %+v", fe)
	}
	// An account cell in Windows-1252 is masked.
	in := "amount,memo,name,email,bank_routing,bank_account\n1,m,n,a@b.co,999900001,11110000\xa016\n"
	fe = mustFileError(t, parseString(in, testOpts()).err)
	if fe.Column != "bank_account" || strings.Contains(fe.Reason, "11110000") || !strings.Contains(fe.Reason, "****") {
		t.Errorf("account cell: %+v", fe)
	}
}

// TestEveryFindingHasAValue: whatever the finding, it says what it is about.
func TestEveryFindingHasAValue(t *testing.T) {
	semi := testOpts()
	semi.Delimiter = ";"
	for name, o := range map[string]Options{
		"csv/invalid_rows.csv": testOpts(), "csv/duplicates.csv": testOpts(), "csv/quoted_comma_newline.csv": testOpts(),
		"csv/rounded_accounts.csv": testOpts(), "csv/question_marks.csv": testOpts(), "csv/lost_zeros.csv": testOpts(),
		"csv/semicolons.csv": semi, "demo/vendors-errors.csv": testOpts(),
	} {
		res := parseFile(t, name, o)
		if len(res.findings) == 0 {
			t.Errorf("%s: no findings", name)
		}
		for _, f := range res.findings {
			if f.Value == "" || !strings.Contains(f.String(), "(") {
				t.Errorf("%s: finding without a value: %+v", name, f)
			}
		}
	}
	res := parseFile(t, "csv/invalid_rows.csv", testOpts())
	got := map[string]string{}
	for _, f := range res.findings {
		got[fmt.Sprintf("%d:%s", f.Line, f.Column)] = f.Value
	}
	for where, want := range map[string]string{
		"9:memo": EmptyValue, "4:amount": "1,234.56", "33:": "24 fields", "14:bank_routing": "****5678",
	} {
		if got[where] != want {
			t.Errorf("%s: value %q, want %q", where, got[where], want)
		}
	}
	res = parseFile(t, "csv/duplicates.csv", testOpts())
	if f := res.findings[0]; f.Line != 4 || !strings.HasPrefix(f.Value, "****") || !strings.Contains(f.Value, ".") {
		t.Errorf("duplicate payment: %+v", f)
	}
}

func values(fs []Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Value
	}
	return out
}
