package csvfile

import (
	"strings"
	"testing"
)

const token36 = "tok_0123456789abcdef0123456789abcdef"

func TestRuleBoundaries(t *testing.T) {
	addr := map[string]string{"address": "1 Main St", "city": "Austin", "state": "TX", "zip": "78701"}
	tok := map[string]string{"bank_routing": "", "bank_account": "", "token": token36, "store": "shop"}
	merge := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	r := strings.Repeat
	cases := []struct {
		name string
		over map[string]string
		live bool
		want []string // columns with findings; "" is a row-level finding
	}{
		{"base row", nil, false, nil},
		{"memo 128", map[string]string{"memo": r("m", 128)}, false, nil},
		{"memo 129", map[string]string{"memo": r("m", 129)}, false, []string{"memo"}},
		{"memo 128 multibyte", map[string]string{"memo": r("é", 128)}, false, nil},
		{"memo with line break", map[string]string{"memo": "two\nlines"}, false, nil},
		{"memo with bell", map[string]string{"memo": "ding\a"}, false, []string{"memo"}},
		{"memo missing", map[string]string{"memo": "  "}, false, []string{"memo"}},
		{"name 80", map[string]string{"name": r("n", 80)}, false, nil},
		{"name 81", map[string]string{"name": r("n", 81)}, false, []string{"name"}},
		{"name with line break", map[string]string{"name": "Ann\nSmith"}, false, []string{"name"}},
		{"email 80", map[string]string{"email": r("e", 68) + "@example.com"}, false, nil},
		{"email 81", map[string]string{"email": r("e", 69) + "@example.com"}, false, []string{"email"}},
		{"email no dot", map[string]string{"email": "a@b"}, false, []string{"email"}},
		{"email two @", map[string]string{"email": "a@@b.co"}, false, []string{"email"}},
		{"email space", map[string]string{"email": "a b@c.co"}, false, []string{"email"}},
		{"email no local part", map[string]string{"email": "@b.co"}, false, []string{"email"}},
		{"neither email nor address", map[string]string{"email": ""}, false, []string{"email"}},
		{"address instead of email", merge(addr, map[string]string{"email": ""}), false, nil},
		{"address 128", merge(addr, map[string]string{"address": r("a", 128)}), false, nil},
		{"address 129", merge(addr, map[string]string{"address": r("a", 129)}), false, []string{"address"}},
		{"address without zip", merge(addr, map[string]string{"zip": ""}), false, []string{"zip"}},
		{"city 40", merge(addr, map[string]string{"city": r("c", 40)}), false, nil},
		{"city 41", merge(addr, map[string]string{"city": r("c", 41)}), false, []string{"city"}},
		{"state lower case", merge(addr, map[string]string{"state": "tx"}), false, nil},
		{"state 1", merge(addr, map[string]string{"state": "T"}), false, []string{"state"}},
		{"state 3", merge(addr, map[string]string{"state": "TXX"}), false, []string{"state"}},
		{"state digit", merge(addr, map[string]string{"state": "T1"}), false, []string{"state"}},
		{"zip 4", merge(addr, map[string]string{"zip": "A1B2"}), false, []string{"zip"}}, // 4 digits: see TestLostLeadingZeros
		{"zip 5", merge(addr, map[string]string{"zip": "78701"}), false, nil},
		{"zip 10", merge(addr, map[string]string{"zip": "78701-1234"}), false, nil},
		{"zip 11", merge(addr, map[string]string{"zip": "78701-12345"}), false, []string{"zip"}},
		{"phone 20", map[string]string{"phone": r("5", 20)}, false, nil},
		{"phone 21", map[string]string{"phone": r("5", 21)}, false, []string{"phone"}},
		{"label 128", map[string]string{"label": r("l", 128)}, false, nil},
		{"label 129", map[string]string{"label": r("l", 129)}, false, []string{"label"}},
		{"type_info 129", map[string]string{"type_info": r("t", 129)}, false, []string{"type_info"}},
		{"number 1", map[string]string{"number": "7"}, false, nil},
		{"number 10", map[string]string{"number": "1234567890"}, false, nil},
		{"number 11", map[string]string{"number": "12345678901"}, false, []string{"number"}},
		{"number letters", map[string]string{"number": "12a"}, false, []string{"number"}},
		{"routing 8 digits", map[string]string{"bank_routing": "02100002"}, false, []string{"bank_routing"}},
		{"routing 10 digits", map[string]string{"bank_routing": "0210000210"}, false, []string{"bank_routing"}},
		{"routing valid live", map[string]string{"bank_routing": "021000021"}, true, nil},
		{"routing bad checksum", map[string]string{"bank_routing": "021000022"}, true, []string{"bank_routing"}},
		{"sandbox routing live", nil, true, []string{"bank_routing"}},
		{"routing scientific", map[string]string{"bank_routing": "2.1E+07"}, false, []string{"bank_routing"}},
		{"account 3", map[string]string{"bank_account": "123"}, false, []string{"bank_account"}},
		{"account 4", map[string]string{"bank_account": "1234"}, false, nil},
		{"account 17", map[string]string{"bank_account": r("1", 17)}, false, nil},
		{"account 18", map[string]string{"bank_account": r("1", 18)}, false, []string{"bank_account"}},
		{"account dashes", map[string]string{"bank_account": "1111-0000"}, false, []string{"bank_account"}},
		{"account spaces trimmed", map[string]string{"bank_account": " 1111000016 "}, false, nil},
		{"routing without account", map[string]string{"bank_account": ""}, false, []string{"bank_account"}},
		{"account without routing", map[string]string{"bank_routing": ""}, false, []string{"bank_routing"}},
		{"token and store", tok, false, nil},
		{"token 35", merge(tok, map[string]string{"token": token36[:35]}), false, []string{"token"}},
		{"token 37", merge(tok, map[string]string{"token": token36 + "x"}), false, []string{"token"}},
		{"token without store", merge(tok, map[string]string{"store": ""}), false, []string{"store"}},
		{"store without token", merge(tok, map[string]string{"token": ""}), false, []string{"token"}},
		{"store 129", merge(tok, map[string]string{"store": r("s", 129)}), false, []string{"store"}},
		{"token with bank", map[string]string{"token": token36, "store": "shop"}, false, []string{"token"}},
		{"no bank and no token", map[string]string{"bank_routing": "", "bank_account": ""}, false, []string{"bank_routing"}},
		{"date today", map[string]string{"authorization_date": "2025-06-15"}, false, nil},
		{"date 30 days old", map[string]string{"authorization_date": "2025-05-16"}, false, nil},
		{"date 31 days old", map[string]string{"authorization_date": "2025-05-15"}, false, []string{"authorization_date"}},
		{"date tomorrow", map[string]string{"authorization_date": "2025-06-16"}, false, []string{"authorization_date"}},
		{"date short month", map[string]string{"authorization_date": "2025-6-01"}, false, []string{"authorization_date"}},
		{"date not in calendar", map[string]string{"authorization_date": "2025-02-29"}, false, []string{"authorization_date"}},
		{"date US style", map[string]string{"authorization_date": "06/15/2025"}, false, []string{"authorization_date"}},
		{"amount 0", map[string]string{"amount": "0"}, false, []string{"amount"}},
		{"amount 0.00", map[string]string{"amount": "0.00"}, false, []string{"amount"}},
		{"amount 0.001", map[string]string{"amount": "0.001"}, false, []string{"amount"}},
		{"amount 0.01", map[string]string{"amount": "0.01"}, false, nil},
		{"amount 100", map[string]string{"amount": "100"}, false, nil},
		{"amount thousands", map[string]string{"amount": "1,000.00"}, false, []string{"amount"}},
		{"amount dollar", map[string]string{"amount": "$5"}, false, []string{"amount"}},
		{"amount negative", map[string]string{"amount": "-1.00"}, false, []string{"amount"}},
		{"amount exponent", map[string]string{"amount": "1e3"}, false, []string{"amount"}},
		{"amount too large", map[string]string{"amount": "92233720368547758.08"}, false, []string{"amount"}},
		{"amount missing", map[string]string{"amount": ""}, false, []string{"amount"}},
		{"recurring full", map[string]string{"recurring": "1", "recurring_cycle": "BI-WEEKLY", "recurring_installments": "0"}, false, nil},
		{"recurring true", map[string]string{"recurring": "TRUE", "recurring_cycle": "week", "recurring_installments": "4", "recurring_start_date": "2025-06-15"}, false, nil},
		{"recurring start NULL", map[string]string{"recurring": "1", "recurring_cycle": "day", "recurring_installments": "3", "recurring_start_date": "null"}, false, nil},
		{"recurring start past", map[string]string{"recurring": "1", "recurring_cycle": "day", "recurring_installments": "3", "recurring_start_date": "2025-06-14"}, false, []string{"recurring_start_date"}},
		{"recurring start bad", map[string]string{"recurring": "1", "recurring_cycle": "day", "recurring_installments": "3", "recurring_start_date": "soon"}, false, []string{"recurring_start_date"}},
		{"recurring no installments", map[string]string{"recurring": "1", "recurring_cycle": "month"}, false, []string{"recurring_installments"}},
		{"recurring bad installments", map[string]string{"recurring": "1", "recurring_cycle": "month", "recurring_installments": "1.5"}, false, []string{"recurring_installments"}},
		{"recurring no cycle", map[string]string{"recurring": "yes", "recurring_installments": "2"}, false, []string{"recurring_cycle"}},
		{"recurring bad value", map[string]string{"recurring": "2", "recurring_cycle": "month"}, false, []string{"recurring"}},
		{"not recurring with schedule", map[string]string{"recurring": "0", "recurring_installments": "2", "recurring_start_date": "2025-07-01"}, false, []string{"recurring_start_date", "recurring_installments"}},
		{"empty recurring with cycle", map[string]string{"recurring_cycle": "day"}, false, []string{"recurring_cycle"}},
		{"not recurring, start NULL", map[string]string{"recurring": "no", "recurring_start_date": "NULL"}, false, nil},
		{"booleans", map[string]string{"verify_before_save": "Yes", "fund_confirmation": "FALSE"}, false, nil},
		{"boolean y", map[string]string{"verify_before_save": "y"}, false, []string{"verify_before_save"}},
		{"boolean 2", map[string]string{"fund_confirmation": "2"}, false, []string{"fund_confirmation"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOpts()
			o.TestMode = !c.live
			res := parseString(csvOf(with(c.over)), o)
			if res.err != nil {
				t.Fatal(res.err)
			}
			var got []string
			for _, f := range res.findings {
				got = append(got, f.Column)
				if f.Line != 2 {
					t.Errorf("finding on line %d, want 2", f.Line)
				}
			}
			equal(t, "finding columns", got, c.want)
			if valid := len(c.want) == 0; valid != (len(res.rows) == 1) {
				t.Errorf("rows = %d, findings %v", len(res.rows), res.findings)
			}
		})
	}
}

func TestABA(t *testing.T) {
	cases := map[string]bool{
		"021000021": true,  // JPMorgan Chase
		"011000015": true,  // Federal Reserve Boston
		"121000358": true,  // Bank of America
		"322271627": true,  // Chase California (thrift range)
		"021000022": false, // checksum off by one
		"999900001": false, // the sandbox fixture
		"000000000": false, // passes the sum, not a bank
		"130000006": false, // passes the sum, unassigned first pair 13
		"02100002":  false,
		"02100002a": false,
	}
	for in, want := range cases {
		if got := abaValid(in); got != want {
			t.Errorf("abaValid(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestSandboxRoutingOnlyInTestMode(t *testing.T) {
	in := csvOf(baseRow())
	if res := parseString(in, testOpts()); len(res.rows) != 1 {
		t.Errorf("test mode: findings %v", res.findings)
	}
	live := testOpts()
	live.TestMode = false
	res := parseString(in, live)
	if len(res.findings) != 1 || res.findings[0].Column != "bank_routing" ||
		res.findings[0].Message != "999900001 is the sandbox test routing number; it is not valid in live mode" {
		t.Errorf("live mode: %v", res.findings)
	}
}

func TestDuplicateRules(t *testing.T) {
	a := with(map[string]string{"number": "12", "amount": "5"})
	cases := []struct {
		name string
		rows []map[string]string
		want []string
	}{
		{"same row twice", []map[string]string{a, a}, []string{"3:"}},
		{"same amount written differently", []map[string]string{a, with(map[string]string{"number": "012", "amount": "5.00"})}, []string{"3:"}},
		{"other account, same number", []map[string]string{a, with(map[string]string{"number": "12", "bank_account": "1111000008"})}, []string{"3:number"}},
		{"other amount, no number", []map[string]string{with(map[string]string{"amount": "5"}), with(map[string]string{"amount": "6"})}, nil},
		{"same, no number, other date", []map[string]string{with(map[string]string{"authorization_date": "2025-06-01"}), with(map[string]string{"authorization_date": "2025-06-02"})}, nil},
		{"same, no number, same date", []map[string]string{with(map[string]string{"authorization_date": "2025-06-01"}), with(map[string]string{"authorization_date": "2025-06-01"})}, []string{"3:"}},
		{"same token payment", []map[string]string{
			with(map[string]string{"bank_routing": "", "bank_account": "", "token": token36, "store": "s", "number": "1"}),
			with(map[string]string{"bank_routing": "", "bank_account": "", "token": token36, "store": "s", "number": "1"}),
		}, []string{"3:"}},
		{"earlier row invalid", []map[string]string{with(map[string]string{"number": "9", "memo": ""}), with(map[string]string{"number": "9"})}, []string{"2:memo", "3:"}},
		{"three copies", []map[string]string{a, a, a}, []string{"3:", "4:"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := parseString(csvOf(c.rows...), testOpts())
			if res.err != nil {
				t.Fatal(res.err)
			}
			var want []string
			if c.want != nil {
				want = c.want
			}
			got := res.where()
			if len(got) == 0 {
				got = nil
			}
			equal(t, "findings", got, want)
		})
	}
}
