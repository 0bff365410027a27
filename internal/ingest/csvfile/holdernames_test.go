package csvfile

import (
	"strings"
	"testing"
)

// The first_name and last_name columns are optional, in any place, with
// payee_id or without, carried on the row trimmed; a row gives both or
// neither, each of at most 128 characters (spec §2.3).
func TestHolderNameColumns(t *testing.T) {
	long := strings.Repeat("x", 129)
	in := "Last_Name,amount,memo,name,payee_id,email,bank_routing,bank_account,first_name\n" +
		" Lovelace ,1.00,m,Ada Lovelace,V-17,ada@example.com,999900001,0001234567, Augusta Ada \n" +
		",2.00,m,Acme Inc,,bob@example.com,999900001,0007654321,\n" +
		",3.00,m,Carl,,carl@example.com,999900001,0007654322,Carl\n" +
		long + ",4.00,m,Dee,,dee@example.com,999900001,0007654323,Dee\n"
	res := parseString(in, testOpts())
	if res.err != nil || res.sum.Valid != 2 || len(res.findings) != 2 {
		t.Fatalf("parse: %+v %v %v", res.sum, res.findings, res.err)
	}
	if r := res.rows[0]; r.FirstName != "Augusta Ada" || r.LastName != "Lovelace" || r.PayeeID != "V-17" || r.BankAccount != "0001234567" {
		t.Fatalf("row with names: %+v", r.Payment)
	}
	if r := res.rows[1]; r.FirstName != "" || r.LastName != "" || r.Amount != 200 {
		t.Fatalf("row without names: %+v", r.Payment)
	}
	if f := res.findings[0]; f.Line != 4 || f.Column != "last_name" || !strings.Contains(f.Message, "required with first_name") {
		t.Fatalf("one name alone: %v", f)
	}
	if f := res.findings[1]; f.Line != 5 || f.Column != "last_name" || !strings.Contains(f.Message, "at most 128 characters, got 129") {
		t.Fatalf("a name too long: %v", f)
	}
}
