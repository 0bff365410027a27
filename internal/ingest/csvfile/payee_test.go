package csvfile

import (
	"errors"
	"strings"
	"testing"
)

// The payee_id column is accepted, in any place and case, and carried on
// the row trimmed; it is no check field and breaks no other column's place.
func TestPayeeIDColumn(t *testing.T) {
	in := "amount,Payee_ID ,memo,name,email,bank_routing,bank_account\n" +
		"1.00, V-17 ,m,Ada,ada@example.com,999900001,0001234567\n" +
		"2.00,,m,Bob,bob@example.com,999900001,0007654321\n"
	res := parseString(in, testOpts())
	if res.err != nil || res.sum.Valid != 2 || len(res.findings) != 0 {
		t.Fatalf("parse: %+v %v %v", res.sum, res.findings, res.err)
	}
	if res.rows[0].PayeeID != "V-17" || res.rows[1].PayeeID != "" {
		t.Fatalf("payee ids %q %q", res.rows[0].PayeeID, res.rows[1].PayeeID)
	}
	if res.rows[0].Name != "Ada" || res.rows[0].BankAccount != "0001234567" || res.rows[1].Amount != 200 {
		t.Fatalf("rows %+v", res.rows)
	}

	// Listed in ignore_columns, it is ignored as before.
	o := testOpts()
	o.IgnoreColumns = []string{"payee_id"}
	if res := parseString(in, o); res.err != nil || res.rows[0].PayeeID != "" {
		t.Fatalf("ignored payee_id: %+v %v", res.rows, res.err)
	}

	// Twice is refused, naming the column.
	res = parseString("payee_id,amount,memo,name,email,bank_routing,bank_account,payee_id\n", testOpts())
	var fe *FileError
	if !errors.As(res.err, &fe) || fe.Column != "payee_id" || !strings.Contains(fe.Reason, "twice") {
		t.Fatalf("duplicate payee_id: %v", res.err)
	}
}

// A file without payee_id parses as before: no payee id.
func TestNoPayeeIDColumn(t *testing.T) {
	res := parseString("amount,memo,name,email,bank_routing,bank_account\n1.00,m,Ada,ada@example.com,999900001,0001234567\n", testOpts())
	if res.err != nil || len(res.rows) != 1 || res.rows[0].PayeeID != "" {
		t.Fatalf("%+v %v", res.rows, res.err)
	}
}

// FuzzPayeeIDColumn: whatever the rows under a header with payee_id hold,
// parsing never panics, and a row accepted carries its payee_id trimmed.
func FuzzPayeeIDColumn(f *testing.F) {
	f.Add(" V-17 ,1.00,m,Ada,ada@example.com,999900001,0001234567\n")
	f.Add(",2.00,m,Bob,bob@example.com,999900001,0007654321\nx,y\n")
	f.Add("\"a,b\",1.00,m,\"C\nD\",c@example.com,999900001,0001234567\n")
	f.Fuzz(func(t *testing.T, rows string) {
		res := parseString("payee_id,amount,memo,name,email,bank_routing,bank_account\n"+rows, testOpts())
		for _, p := range res.rows {
			if p.PayeeID != strings.TrimSpace(p.PayeeID) {
				t.Fatalf("payee id not trimmed: %q", p.PayeeID)
			}
		}
	})
}
