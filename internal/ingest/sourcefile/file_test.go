package sourcefile

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
)

func parseFile(t *testing.T, kind payment.BatchKind, name string, o csvfile.Options) result {
	return parseReader(kind, bytes.NewReader(testdata(t, name)), o)
}

func TestFundingSourcesFile(t *testing.T) {
	res := parseFile(t, payment.KindSources, "funding-sources.csv", testOpts())
	if res.err != nil {
		t.Fatal(res.err)
	}
	equal(t, "findings", res.where(), []string{})
	equal(t, "row lines", res.rowLines(), []int{2, 3, 4, 6, 7}) // line 5 is blank
	if res.sum != (csvfile.Summary{Rows: 5, Valid: 5}) {
		t.Errorf("summary %+v", res.sum)
	}
	methods := []funding.Method{}
	for _, r := range res.rows {
		methods = append(methods, r.Method)
	}
	equal(t, "methods", methods, []funding.Method{funding.OnDemand, funding.OnDemand, funding.OnDemand, funding.Processor, funding.OnDemand})
	if r := res.rows[2]; r.Account != "0123456789" || r.Routing != "021000021" || r.UserID == "" {
		t.Errorf("leading zero lost: %+v", r.Request)
	}
	if r := res.rows[4]; r.Customer.LastName != "O'Neil, Jr." || r.Nickname != "Rent, unit 4" || r.Account != "00012345678" {
		t.Errorf("quoted cells: %+v", r.Request)
	}
	if r := res.rows[3]; r.Customer.LastName != "García" || r.ProcessorToken == "" {
		t.Errorf("token row: %+v", r.Request)
	}
	noSecret(t, res, res.rows[3].ProcessorToken)
}

func TestVerificationsFile(t *testing.T) {
	res := parseFile(t, payment.KindVerifications, "verifications.csv", testOpts()) // BOM and CRLF
	if res.err != nil {
		t.Fatal(res.err)
	}
	equal(t, "findings", res.where(), []string{})
	if len(res.rows) != 2 || res.rows[1].Amounts[0] != 11 || res.rows[1].Amounts[1] != 40 || res.rows[1].Method != funding.Verify {
		t.Errorf("rows %+v", res.rows)
	}
}

func TestErrorFiles(t *testing.T) {
	res := parseFile(t, payment.KindSources, "funding-sources-errors.csv", testOpts())
	if res.err != nil {
		t.Fatal(res.err)
	}
	equal(t, "findings", res.where(), []string{"3:", "4:last_name", "4:email", "4:routing_number", "4:account_number",
		"4:account_type", "5:first_name", "6:account_type", "6:method", "7:processor_token", "8:routing_number",
		"9:account_type", "9:nickname", "10:processor_token", "11:account_number", "11:method", "12:account_number",
		"13:user_id", "14:"})
	equal(t, "row lines", res.rowLines(), []int{2})
	if res.sum != (csvfile.Summary{Rows: 13, Valid: 1, Invalid: 12}) {
		t.Errorf("summary %+v", res.sum)
	}
	noSecret(t, res, "processor-sandbox-secret-token")

	res = parseFile(t, payment.KindVerifications, "verifications-errors.csv", testOpts())
	equal(t, "verification findings", res.where(), []string{"2:amount1", "3:funding_source_id", "3:amount2",
		"4:amount1", "4:amount2", "5:funding_source_id", "5:amount1", "5:amount2"})
	if res.sum.Valid != 0 || res.sum.Invalid != 4 {
		t.Errorf("summary %+v", res.sum)
	}
}

func TestDuplicates(t *testing.T) {
	other := map[string]string{"first_name": "Bob", "last_name": "Jones", "email": "bob@example.com"}
	user := map[string]string{"user_id": sourceID, "first_name": "", "last_name": "", "email": ""}
	cases := []struct {
		name  string
		rows  []map[string]string
		where []string
		msg   string
	}{
		{"same customer and account", []map[string]string{src(nil), src(map[string]string{"email": "ANN@example.com "})},
			[]string{"3:"}, "same customer and account as line 2"},
		{"same user and account", []map[string]string{src(user), src(user)}, []string{"3:"}, "same customer and account as line 2"},
		{"another customer", []map[string]string{src(nil), src(other)}, []string{"3:"},
			"same account as line 2, for another customer: an account belongs to one customer at a time"},
		{"a user and an email", []map[string]string{src(user), src(nil)}, []string{"3:"},
			"same account as line 2: an account is linked once, to one customer"},
		{"after a row with errors", []map[string]string{src(map[string]string{"email": "bad"}), src(nil)},
			[]string{"2:email", "3:"}, "is not an e-mail address"},
		{"same token", []map[string]string{tokenRow(nil), tokenRow(other)}, []string{"3:processor_token"},
			"same processor_token as line 2: a token is exchanged once"},
		{"other accounts", []map[string]string{src(nil), src(map[string]string{"account_number": "1111000002"}),
			tokenRow(nil)}, []string{}, ""},
		{"one email, other names", []map[string]string{src(nil), src(map[string]string{"first_name": "Anne", "account_number": "1111000002"})},
			[]string{"3:email"}, "has other names on line 2: rows of one email share one customer, created with the names of the first row"},
		{"one email, names in other case", []map[string]string{src(nil), src(map[string]string{"first_name": "ANN", "account_number": "1111000002"})},
			[]string{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := parseString(payment.KindSources, sources(c.rows...), testOpts())
			equal(t, "findings", res.where(), c.where)
			if len(c.where) > 0 && !strings.Contains(res.findings[0].Message, c.msg) {
				t.Errorf("message %q, want %q", res.findings[0].Message, c.msg)
			}
			for _, f := range res.findings {
				if f.Column == "" && f.Value != "****0001" {
					t.Errorf("duplicate's value %q", f.Value)
				}
			}
			noSecret(t, res, token)
		})
	}
	res := parseString(payment.KindSources, sources(src(nil), src(map[string]string{"first_name": "Anne", "account_number": "1111000002"})), testOpts())
	if len(res.rows) != 2 || res.sum.Warnings != 1 || res.findings[0].Severity != csvfile.Warning {
		t.Errorf("a warning refused a row: %+v %+v", res.sum, res.findings)
	}
	res = parseString(payment.KindVerifications, verifications(baseVerify(),
		with(baseVerify(), map[string]string{"funding_source_id": strings.ToUpper(sourceID)})), testOpts())
	equal(t, "verification findings", res.where(), []string{"3:funding_source_id"})
	if !strings.Contains(res.findings[0].Message, "same funding_source_id as line 2: a funding source is verified once") {
		t.Errorf("message %q", res.findings[0].Message)
	}
}

func TestHeaders(t *testing.T) {
	row := "," + sourceID + ",999900001,1111000001\n"
	cases := []struct {
		name, file string
		kind       payment.BatchKind
		opts       func(*csvfile.Options)
		where      []string // findings, when the file is read
		err        string   // the FileError, when it is not
	}{
		{name: "camelCase", file: "firstName,lastName,Email,routingNumber,accountNumber\nAnn,Smith,a@b.co,999900001,1111000001\n",
			kind: payment.KindSources, where: []string{}},
		{name: "user_id alone", file: "user_id,routing_number,account_number\n,999900001,1111000001\n",
			kind: payment.KindSources, where: []string{"2:user_id"}},
		{name: "token alone", file: "user_id,processor_token\n" + sourceID + ",\n", kind: payment.KindSources,
			where: []string{"2:processor_token"}},
		{name: "numbers alone", file: "user_id,routing_number,account_number\n" + sourceID + ",,\n", kind: payment.KindSources,
			where: []string{"2:routing_number", "2:account_number"}},
		{name: "ignored column", file: "user_id,notes,routing_number,account_number\n" + sourceID + ",x,999900001,1111000001\n",
			kind: payment.KindSources, opts: func(o *csvfile.Options) { o.IgnoreColumns = []string{"Notes"} }, where: []string{}},
		{name: "own column never ignored", file: "user_id,routing_number,account_number\n,999900001,1111000001\n",
			kind: payment.KindSources, opts: func(o *csvfile.Options) { o.IgnoreColumns = []string{"user_id"} }, where: []string{"2:user_id"}},
		{name: "stray value", file: "user_id,,routing_number,account_number\n" + sourceID + ",1111000009,999900001,1111000001\n",
			kind: payment.KindSources, where: []string{"2:"}},
		{name: "field count", file: "user_id,routing_number,account_number\n" + sourceID + ",999900001,1111000001,x\n",
			kind: payment.KindSources, where: []string{"2:"}},
		{name: "lacks customer", file: "phone,routing_number,account_number\n", kind: payment.KindSources,
			err: "line 1: header row of a funding-source file lacks required column user_id, or first_name, last_name and email"},
		{name: "lacks account", file: "user_id,routing_number,nickname\n", kind: payment.KindSources,
			err: "lacks required column routing_number and account_number, or processor_token"},
		{name: "lacks amounts", file: "source_id,amount1\n", kind: payment.KindVerifications,
			err: "line 1: header row of a verification file lacks required column amount2"},
		{name: "twice", file: "funding_source_id,amount1,amount2,SourceId\n", kind: payment.KindVerifications,
			err: "line 1, column funding_source_id: column appears twice (columns 1 and 4)"},
		{name: "twice, camelCase", file: "user_id,userId,processor_token\n", kind: payment.KindSources,
			err: "column user_id: column appears twice (columns 1 and 2)"},
		{name: "unknown", file: "user_id,routing_numbr,account_number\n", kind: payment.KindSources,
			err: "line 1, column routing_numbr: unknown column; did you mean routing_number? Fix its name or list it in ignore_columns"},
		{name: "other kind's column", file: "user_id,processor_token,amount1\n", kind: payment.KindSources,
			err: "column amount1: unknown column"},
		{name: "no header", file: sourceID + ",999900001,1111000001\n", kind: payment.KindSources,
			err: "line 1: the first row must be a header row of column names; column 1 holds data"},
		{name: "semicolons", file: "user_id;routing_number;account_number\n" + row, kind: payment.KindSources,
			err: `line 1: this file uses semicolons between cells; save it as CSV with commas, or set ingest.delimiter: ";"`},
		{name: "semicolons set", file: "user_id;routing_number;account_number\n" + sourceID + ";999900001;1111000001\n",
			kind: payment.KindSources, opts: func(o *csvfile.Options) { o.Delimiter = ";" }, where: []string{}},
		{name: "empty", file: "", kind: payment.KindSources, err: "empty file: a header row is required"},
		{name: "no rows", file: "source_id,amount1,amount2\n,,\n", kind: payment.KindVerifications,
			err: "no rows: the file has a header row but no verification rows"},
		{name: "binary", file: "user_id\n\x00\x01", kind: payment.KindSources, err: "line 2: not a CSV text file (it contains NUL bytes)"},
		{name: "utf-16", file: "\xff\xfeu\x00", kind: payment.KindSources, err: "UTF-16"},
		{name: "open quote", file: "user_id,processor_token\n\"abc,def\n", kind: payment.KindSources, err: "a quoted field is not closed"},
		{name: "windows-1252", file: "first_name,last_name,email,processor_token\nJos\xe9,Smith,j@x.co,tok\n", kind: payment.KindSources,
			err: `line 2, column first_name: invalid UTF-8 text: the file looks saved as Windows-1252`},
		{name: "windows-1252 token", file: "user_id,processor_token\nu,processor-sandbox-12345\xe9\n", kind: payment.KindSources,
			err: `line 2, column processor_token: invalid UTF-8 text: the file looks saved as Windows-1252 (Excel's plain "CSV", or a Western character set), in which this cell reads "****45é"; save the file as CSV UTF-8`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOpts()
			if c.opts != nil {
				c.opts(&o)
			}
			res := parseString(c.kind, c.file, o)
			if c.err != "" {
				fe := mustFileError(t, res.err)
				if !strings.Contains(fe.Error(), c.err) {
					t.Errorf("error %q, want %q", fe.Error(), c.err)
				}
				return
			}
			if res.err != nil {
				t.Fatal(res.err)
			}
			equal(t, "findings", res.where(), c.where)
		})
	}
}

func TestRowLevelMessages(t *testing.T) {
	res := parseString(payment.KindSources, "user_id,,routing_number,account_number\n"+sourceID+",1111000009,999900001,1111000001\n", testOpts())
	if f := res.findings[0]; f.Message != "column 2 has a value but no name in the header row" || f.Value != "****0009" {
		t.Errorf("stray %+v", f)
	}
	o := testOpts()
	o.Delimiter = "\t"
	res = parseString(payment.KindSources, "user_id\tprocessor_token\nu\tt\tx\n", o)
	if f := res.findings[0]; f.Message != "has 3 fields but the header has 2; is a value with a tab not quoted?" || f.Value != "3 fields" {
		t.Errorf("field count %+v", f)
	}
	// A quoted field over two lines keeps the physical lines.
	res = parseString(payment.KindSources, "first_name,last_name,email,processor_token\n\"Ann\nMarie\",Smith,a@b.co,t1\nBob,Jones,b@c.co,t2\n", testOpts())
	equal(t, "findings", res.where(), []string{"2:first_name"})
	equal(t, "rows", res.rowLines(), []int{4})
}

func TestLostZerosRefuseTheFile(t *testing.T) {
	rows := []map[string]string{src(map[string]string{"routing_number": "11000015"})}
	for i := range 6 {
		rows = append(rows, src(map[string]string{"routing_number": "21000021", "account_number": fmt.Sprintf("11110000%02d", i+2)}))
	}
	rows = append(rows, src(map[string]string{"account_number": "1111000099"}))
	res := parseString(payment.KindSources, sources(rows...), testOpts())
	fe := mustFileError(t, res.err)
	if !fe.Damaged || fe.Line != 2 || fe.Column != "routing_number" {
		t.Errorf("error %+v", fe)
	}
	for _, want := range []string{"routing number ****0015 has 8 digits instead of 9: a spreadsheet dropped its leading zero",
		"7 routing numbers of this file lost leading zeros (lines 2, 3, 4, 5, 6 and more)",
		"format the routing_number and account_number columns as text"} {
		if !strings.Contains(fe.Error(), want) {
			t.Errorf("error %q lacks %q", fe.Error(), want)
		}
	}
	// Verdict, printed after the findings, does not restate line 2's.
	if v := fe.Verdict(); strings.Contains(v, "****0015") || !strings.Contains(v, "7 routing numbers of this file lost") {
		t.Errorf("verdict %q", v)
	}
	if len(res.findings) != 7 || !strings.Contains(res.findings[0].Message, "has 8 digits instead of 9") || res.sum.Rows != 8 {
		t.Errorf("findings %v, summary %+v", res.findings, res.sum)
	}
	if strings.Contains(fe.Error(), "11000015") {
		t.Error("the routing number is shown whole")
	}
}

func TestRowMasksSecrets(t *testing.T) {
	r := Row{Line: 3, Request: funding.Request{Method: funding.Processor, Customer: funding.Customer{Email: "a@b.co"}, ProcessorToken: token}}
	a := Row{Line: 4, Request: funding.Request{Method: funding.OnDemand, UserID: "u1", Routing: "999900001", Account: "1111000016", AccountType: "checking"}}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	log.Info("row", "row", r)
	log.Info("row", "row", a)
	out := fmt.Sprintf("%v %+v %#v %s | %v %#v", r, r, r, r, a, a) + logs.String()
	if strings.Contains(out, token) || strings.Contains(out, "1111000016") {
		t.Fatalf("secret shown: %s", out)
	}
	for _, want := range []string{"line 3: customer a@b.co, processor token …(54 chars)",
		"line 4: user u1, on-demand routing 999900001 account ****0016 (checking)", "row.account=****0016"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q lacks %q", out, want)
		}
	}
}

func TestCallbacksStopParse(t *testing.T) {
	stop := errors.New("stop")
	file := sources(src(nil), src(map[string]string{"account_number": "1"}), src(map[string]string{"account_number": "1111000003"}))
	n := 0
	_, err := Parse(strings.NewReader(file), payment.KindSources, testOpts(), func(Row) error { n++; return stop }, nil)
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("err %v after %d rows", err, n)
	}
	_, err = Parse(strings.NewReader(file), payment.KindSources, testOpts(), nil, func(csvfile.Finding) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("err %v", err)
	}
	if _, err := Parse(strings.NewReader(file), payment.KindPayments, testOpts(), nil, nil); err == nil {
		t.Error("a payment file parsed")
	}
	if _, err := Parse(strings.NewReader(file), payment.KindSources, csvfile.Options{}, nil, nil); err == nil {
		t.Error("no run date")
	}
	o := testOpts()
	o.MaxRecordBytes = 64
	_, err = Parse(strings.NewReader("user_id,processor_token\nu,"+strings.Repeat("x", 200<<10)+"\n"), payment.KindSources, o, nil, nil)
	if fe := mustFileError(t, err); !strings.Contains(fe.Reason, "longer than 64 bytes") {
		t.Errorf("error %v", fe)
	}
}
