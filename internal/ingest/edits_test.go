package ingest

import (
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

// readEdit judges an edit line's form as a payment file judges the same
// columns, and reads the check's reference and the values it gives.
func TestReadEdit(t *testing.T) {
	id := strings.Repeat("a", 36)
	header := strings.Split("check_id,file,line,amount,number,label,memo,name,email,bank_routing,bank_account", ",")
	for _, tc := range []struct {
		line string
		why  string // a part of the reason; "" for a line of good form
	}{
		{id + ",,,12.50,,,,,,999900001,1111000016", ""},
		{",week.csv,3,,0042,wk49,inv 2,Ann B,ann@example.com,999900001,1111000016", ""},
		{"abc,,,12.50,,,,,,999900001,1111000016", "is not a check id"},
		{",week.csv,x,12.50,,,,,,999900001,1111000016", "does not name a row"},
		{",,,12.50,,,,,,999900001,1111000016", "names no check"},
		{id + ",,,12.50,,,,,,,1111000016", "bank_routing and bank_account are empty"},
		{id + ",,,12.50,,,,,,999900001,12", "bank_account"},
		{id + ",,,-3,,,,,,999900001,1111000016", "amount must be greater than 0"},
		{id + ",,,,12345678901,,,,,999900001,1111000016", "number must be 1 to 10 digits"},
		{id + ",,,,,,,,not-an-email,999900001,1111000016", "email is not an e-mail address"},
		{id + ",,,,,,,,,999900001,1111000016", "changes nothing"},
	} {
		e, why := readEdit(payment.FileMeta{SHA256: "f"}, NewLine(2, header, strings.Split(tc.line, ",")))
		if tc.why == "" && why != "" || !strings.Contains(why, tc.why) {
			t.Errorf("%q: %q, want %q", tc.line, why, tc.why)
		}
		if strings.Contains(why, "1111000016") {
			t.Errorf("%q: the reason shows the account: %q", tc.line, why)
		}
		if tc.why == "" && (e.FileSHA != "f" || e.Line != 2 || e.BankAccount != "1111000016") {
			t.Errorf("%q: read %+v", tc.line, e)
		}
	}
	e, _ := readEdit(payment.FileMeta{}, NewLine(2, header, strings.Split(",week.csv,3,12.50,0042,wk49,,,,999900001,1111000016", ",")))
	if e.RowLine != 3 || e.File != "week.csv" || e.Change != (payment.EditChange{Amount: 1250, Number: "0042", Label: "wk49"}) {
		t.Errorf("read %+v", e)
	}
}
