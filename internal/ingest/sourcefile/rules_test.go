package sourcefile

import (
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// ruleCase is one row of a file and what must be said of it: the findings
// as "line:column", the first one's message (a substring) and value.
type ruleCase struct {
	name  string
	row   map[string]string
	opts  func(*csvfile.Options)
	where []string
	msg   string
	value string
}

func runRules(t *testing.T, kind payment.BatchKind, cases []ruleCase, file func(...map[string]string) string) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOpts()
			if c.opts != nil {
				c.opts(&o)
			}
			res := parseString(kind, file(c.row), o)
			if res.err != nil {
				t.Fatal(res.err)
			}
			if c.where == nil {
				c.where = []string{}
			}
			equal(t, "findings", res.where(), c.where)
			if len(c.where) == 0 {
				if len(res.rows) != 1 {
					t.Fatalf("rows %v", res.rows)
				}
				return
			}
			f := res.findings[0]
			if !strings.Contains(f.Message, c.msg) {
				t.Errorf("message %q, want %q", f.Message, c.msg)
			}
			if c.value != "" && f.Value != c.value {
				t.Errorf("value %q, want %q", f.Value, c.value)
			}
			if f.Severity == csvfile.Error && len(res.rows) != 0 {
				t.Errorf("a row with an error was delivered: %v", res.rows)
			}
			noSecret(t, res, token)
		})
	}
}

func src(over map[string]string) map[string]string { return with(baseSource(), over) }

func tokenRow(over map[string]string) map[string]string {
	return src(with(map[string]string{"routing_number": "", "account_number": "", "processor_token": token}, over))
}

func live(o *csvfile.Options)         { o.TestMode = false }
func undeprecated(o *csvfile.Options) { o.RunDate = before }

func TestSourceRules(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	runRules(t, payment.KindSources, []ruleCase{
		{name: "valid", row: src(nil)},
		{name: "valid user_id", row: src(map[string]string{"user_id": sourceID, "first_name": "", "last_name": "", "email": ""})},
		{name: "user_id with a space", row: src(map[string]string{"user_id": "99 bad", "first_name": "", "last_name": "", "email": ""}),
			where: []string{"2:user_id"}, msg: "must not contain spaces; copy it exactly as issued", value: "99 bad"},
		{name: "user_id too long", row: src(map[string]string{"user_id": long(65), "first_name": "", "last_name": "", "email": ""}),
			where: []string{"2:user_id"}, msg: "must be at most 64 characters (has 65)"},
		{name: "user_id and a customer", row: src(map[string]string{"user_id": sourceID, "phone": "555"}),
			where: []string{"2:first_name", "2:last_name", "2:email", "2:phone"},
			msg:   "must be empty when user_id is given: a row names an existing customer by user_id, or a new one by first_name, last_name and email"},
		{name: "no last name", row: src(map[string]string{"last_name": ""}),
			where: []string{"2:last_name"}, msg: "is required unless user_id is given", value: csvfile.EmptyValue},
		{name: "no customer", row: src(map[string]string{"first_name": "", "last_name": "", "email": ""}),
			where: []string{"2:first_name", "2:last_name", "2:email"}, msg: "is required unless user_id is given"},
		{name: "long name", row: src(map[string]string{"first_name": long(129)}),
			where: []string{"2:first_name"}, msg: "must be at most 128 characters (has 129)"},
		{name: "name on two lines", row: src(map[string]string{"last_name": "Smith\nJones"}),
			where: []string{"2:last_name"}, msg: "must be on one line"},
		{name: "control character", row: src(map[string]string{"first_name": "A\x01nn"}),
			where: []string{"2:first_name"}, msg: "contains the control character U+0001"},
		{name: "bad email", row: src(map[string]string{"email": "ann@example"}),
			where: []string{"2:email"}, msg: "is not an e-mail address like name@example.com", value: "ann@example"},
		{name: "long email", row: src(map[string]string{"email": long(70) + "@example.com"}),
			where: []string{"2:email"}, msg: "must be at most 80 characters (has 82)"},
		{name: "long phone", row: src(map[string]string{"phone": strings.Repeat("5", 21)}),
			where: []string{"2:phone"}, msg: "must be at most 20 characters (has 21)"},
		{name: "routing checksum", row: src(map[string]string{"routing_number": "121000359"}),
			where: []string{"2:routing_number"}, msg: "is not a valid ABA routing number (checksum or first two digits)", value: "121000359"},
		{name: "routing letters", row: src(map[string]string{"routing_number": "12100035x"}),
			where: []string{"2:routing_number"}, msg: "must be exactly 9 digits", value: "****035x"},
		{name: "routing scientific", row: src(map[string]string{"routing_number": "1.21E+08"}),
			where: []string{"2:routing_number"}, msg: "must be exactly 9 digits (it looks like scientific notation; format the column as text)"},
		{name: "sandbox routing live", row: src(nil), opts: live,
			where: []string{"2:routing_number"}, msg: "999900001 is the sandbox test routing number; it is not valid in live mode"},
		{name: "real routing live", row: src(map[string]string{"routing_number": "021000021"}), opts: live},
		{name: "short account", row: src(map[string]string{"account_number": "12"}),
			where: []string{"2:account_number"}, msg: "must be 4 to 17 digits", value: "****2"},
		{name: "account apostrophe", row: src(map[string]string{"account_number": "'0123456"}),
			where: []string{"2:account_number"}, msg: "(a leading apostrophe is not removed; format the column as text instead)"},
		{name: "account rounded", row: src(map[string]string{"account_number": "12345678901234500"}),
			where: []string{"2:account_number"}, msg: "looks rounded by a spreadsheet: it has 17 digits and the last 2 digits are 0", value: "****4500"},
		{name: "account rounded names its column", row: src(map[string]string{"account_number": "1234567890123450"}),
			where: []string{"2:account_number"}, msg: "Format the account_number column as text"},
		{name: "account type", row: src(map[string]string{"account_type": "current"}),
			where: []string{"2:account_type"}, msg: "must be checking or savings", value: "current"},
		{name: "long nickname", row: src(map[string]string{"nickname": long(129)}),
			where: []string{"2:nickname"}, msg: "must be at most 128 characters (has 129)"},
		{name: "unknown method", row: src(map[string]string{"method": "wire"}),
			where: []string{"2:method"}, msg: "must be on-demand or micro-deposits (empty: on-demand)", value: "wire"},
		{name: "processor method with numbers", row: src(map[string]string{"method": "processor"}),
			where: []string{"2:method"}, msg: "is processor, but the row gives routing_number and account_number"},
		{name: "micro-deposits deprecated", row: src(map[string]string{"method": "micro-deposits", "account_type": "checking"}),
			where: []string{"2:method"}, value: "micro-deposits",
			msg: `micro-deposit verification is deprecated for new bank accounts since 2026-06-08 (this file is read on 2026-11-20): ` +
				`write on-demand to link the account by its numbers, or have the customer link it with the bank-linking provider ` +
				`and give the processor_token issued for processor "svcach"`},
		{name: "micro-deposits on the deprecation day", row: src(map[string]string{"method": "micro", "account_type": "checking"}),
			opts: func(o *csvfile.Options) { o.RunDate = funding.DeprecationDate }, where: []string{"2:method"}, msg: "deprecated"},
		{name: "micro-deposits before", row: src(map[string]string{"method": "Micro_Deposits", "account_type": "savings"}), opts: undeprecated},
		{name: "micro-deposits without type", row: src(map[string]string{"method": "micro-deposits"}), opts: undeprecated,
			where: []string{"2:account_type"}, msg: "is required for micro-deposits: checking or savings"},
		{name: "routing without account", row: src(map[string]string{"account_number": ""}),
			where: []string{"2:account_number"}, msg: "is required together with routing_number"},
		{name: "account without routing", row: src(map[string]string{"routing_number": ""}),
			where: []string{"2:routing_number"}, msg: "is required together with account_number"},
		{name: "neither", row: src(map[string]string{"routing_number": "", "account_number": ""}),
			where: []string{"2:routing_number"}, msg: "is required: give routing_number and account_number, or processor_token"},
		{name: "token", row: tokenRow(nil)},
		{name: "token, method processor", row: tokenRow(map[string]string{"method": "Processor"})},
		{name: "token and numbers", row: src(map[string]string{"processor_token": token}),
			where: []string{"2:processor_token"}, value: "…(54 chars)",
			msg: "must not be given together with routing_number and account_number: a row links an account by its numbers or by a processor token, not both"},
		{name: "token, method on-demand", row: tokenRow(map[string]string{"method": "on-demand"}),
			where: []string{"2:method"}, msg: "must be processor or empty on a row with a processor_token"},
		{name: "token and type", row: tokenRow(map[string]string{"account_type": "checking"}),
			where: []string{"2:account_type"}, msg: "must be empty on a row with a processor_token: the token stands for the account, its type included"},
		{name: "token and nickname", row: tokenRow(map[string]string{"nickname": "Main"}),
			where: []string{"2:nickname"}, msg: "must be empty on a row with a processor_token: a source linked by a token has no nickname"},
		{name: "token with a space", row: tokenRow(map[string]string{"processor_token": "processor sandbox"}),
			where: []string{"2:processor_token"}, msg: "must not contain spaces", value: "…(17 chars)"},
		{name: "token too long", row: tokenRow(map[string]string{"processor_token": long(257)}),
			where: []string{"2:processor_token"}, msg: "must be at most 256 characters (has 257)", value: "…(257 chars)"},
		{name: "lost letters in a name", row: src(map[string]string{"first_name": "?ukasz"}),
			where: []string{"2:first_name"}, msg: `has a "?" where a letter should be`},
		{name: "lost letters in a nickname", row: src(map[string]string{"nickname": "M?ller savings"}),
			where: []string{"2:nickname"}, msg: `has a "?" where a letter should be`},
		{name: "a question is no lost letter", row: src(map[string]string{"nickname": "Savings?"})},
	}, sources)
}

func TestSourceRowRequests(t *testing.T) {
	rows := []map[string]string{
		src(map[string]string{"phone": " 555-0100 ", "account_type": "SAVINGS", "nickname": "Main", "method": "ON_DEMAND"}),
		src(map[string]string{"user_id": sourceID, "first_name": "", "last_name": "", "email": "", "account_number": "1111000002"}),
		tokenRow(map[string]string{"email": "bob@example.com"}),
	}
	res := parseString(payment.KindSources, sources(rows...), testOpts())
	if res.err != nil || len(res.findings) != 0 || len(res.rows) != 3 {
		t.Fatalf("err %v, findings %v, rows %v", res.err, res.findings, res.rows)
	}
	want := []funding.Request{
		{Method: funding.OnDemand, Customer: funding.Customer{FirstName: "Ann", LastName: "Smith", Email: "ann@example.com", Phone: "555-0100"},
			Routing: "999900001", Account: "1111000001", AccountType: "savings", Nickname: "Main"},
		{Method: funding.OnDemand, UserID: sourceID, Routing: "999900001", Account: "1111000002", AccountType: "checking"},
		{Method: funding.Processor, Customer: funding.Customer{FirstName: "Ann", LastName: "Smith", Email: "bob@example.com"}, ProcessorToken: token},
	}
	for i, r := range res.rows {
		if r.Request != want[i] {
			t.Errorf("row %d = %+v\nwant %+v", r.Line, r.Request, want[i])
		}
	}
	equal(t, "lines", res.rowLines(), []int{2, 3, 4})

	o := testOpts()
	o.RunDate = before
	res = parseString(payment.KindSources, sources(src(map[string]string{"method": "micro-deposits", "account_type": "Checking"})), o)
	if len(res.rows) != 1 || res.rows[0].Method != funding.MicroDeposits || res.rows[0].AccountType != "checking" {
		t.Fatalf("micro-deposits row %+v, findings %v", res.rows, res.findings)
	}
}

func TestVerificationRules(t *testing.T) {
	v := func(over map[string]string) map[string]string { return with(baseVerify(), over) }
	cases := []ruleCase{
		{name: "valid", row: v(nil)},
		{name: "no leading zero", row: v(map[string]string{"amount1": ".5"})},
		{name: "upper-case id", row: v(map[string]string{"funding_source_id": strings.ToUpper(sourceID)})},
		{name: "whole cents", row: v(map[string]string{"amount1": "7"}), where: []string{"2:amount1"}, value: "7",
			msg: "must be a micro-deposit in dollars from 0.01 to 0.99, as on the bank statement: write 0.07 for 7 cents"},
		{name: "whole cents 99", row: v(map[string]string{"amount2": "99"}), where: []string{"2:amount2"}, msg: "write 0.99 for 99 cents"},
		{name: "zero", row: v(map[string]string{"amount1": "0.00"}), where: []string{"2:amount1"},
			msg: "must be a micro-deposit in dollars from 0.01 to 0.99, as on the bank statement"},
		{name: "a dollar", row: v(map[string]string{"amount2": "1.00"}), where: []string{"2:amount2"}, msg: "from 0.01 to 0.99"},
		{name: "three decimals", row: v(map[string]string{"amount1": "0.071"}), where: []string{"2:amount1"},
			msg: "as on the bank statement, with at most two decimal places"},
		{name: "decimal comma", row: v(map[string]string{"amount1": "0,07"}), where: []string{"2:amount1"},
			msg: "as on the bank statement: use a dot for decimals: write 0.07, not 0,07"},
		{name: "currency", row: v(map[string]string{"amount2": "$0.15"}), where: []string{"2:amount2"}, msg: "without a currency symbol"},
		{name: "negative", row: v(map[string]string{"amount2": "-0.15"}), where: []string{"2:amount2"}, msg: "as on the bank statement, like 0.07"},
		{name: "words", row: v(map[string]string{"amount2": "seven"}), where: []string{"2:amount2"}, msg: "like 0.07"},
		{name: "bad id", row: v(map[string]string{"funding_source_id": "1111000001"}), where: []string{"2:funding_source_id"},
			msg: "must be a funding source id: 36 characters like 3b241101-e2bb-4255-8caf-4136c566a962", value: "1111000001"},
		{name: "id not hex", row: v(map[string]string{"funding_source_id": "3b241101-e2bb-4255-8caf-4136c566a96g"}),
			where: []string{"2:funding_source_id"}, msg: "must be a funding source id"},
		{name: "id without hyphens", row: v(map[string]string{"funding_source_id": "3b241101e2bb42558caf4136c566a962abcd"}),
			where: []string{"2:funding_source_id"}, msg: "must be a funding source id"},
		{name: "empty", row: map[string]string{"amount2": "0.15"}, where: []string{"2:funding_source_id", "2:amount1"},
			msg: "is required", value: csvfile.EmptyValue},
		{name: "blank amount", row: v(map[string]string{"amount2": " "}), where: []string{"2:amount2"}, msg: "is required"},
	}
	runRules(t, payment.KindVerifications, cases, func(rows ...map[string]string) string {
		s := verifications(rows...)
		if strings.Contains(rows[0]["amount1"], ",") && !strings.Contains(s, `"0,07"`) {
			t.Fatal("the comma is not quoted")
		}
		return s
	})

	res := parseString(payment.KindVerifications, verifications(v(map[string]string{"amount1": "0.5", "amount2": "0.09"})), testOpts())
	if len(res.rows) != 1 {
		t.Fatalf("rows %v findings %v", res.rows, res.findings)
	}
	want := funding.Request{Method: funding.Verify, SourceID: sourceID, Amounts: [2]money.Cents{50, 9}}
	if res.rows[0].Request != want {
		t.Errorf("request %+v, want %+v", res.rows[0].Request, want)
	}
}

func TestSemicolonVerification(t *testing.T) {
	o := testOpts()
	o.Delimiter = ";"
	res := parseString(payment.KindVerifications, "source_id;amount1;amount2\n"+sourceID+";0,07;0.15\n", o)
	equal(t, "findings", res.where(), []string{"2:amount1"})
	if !strings.Contains(res.findings[0].Message, "(even in a file with semicolons between cells)") {
		t.Errorf("message %q", res.findings[0].Message)
	}
}
