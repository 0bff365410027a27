package csvfile

import (
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
		{"invalid utf8 in row", "amount,memo,name,email,bank_routing,bank_account\n1,ok,a,a@b.co,999900001,1111000016\n2,\"two\nlines \xe9\",a,a@b.co,999900001,1111000016\n", 4, "", "invalid UTF-8"},
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
