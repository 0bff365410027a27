package sheet_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/ingest/sheet"
	"github.com/batchd/batchd/internal/ingest/sourcefile"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// TestTextCellsExact: identifier columns formatted as Text keep their
// leading zeros, and every text cell reaches the rules as typed.
func TestTextCellsExact(t *testing.T) {
	data := one(t, payHeader,
		texts("0042", "1086.30", "=SUM(A1)", "Ann", "ann@example.com", "", "02134", "011000015", "0001234567"),
		texts("0043", "5", "Rent", "Bob", "bob@example.com", "", "", "999900001", "0987654321"),
	)
	rows, findings, err := payments(t, data, sheet.Options{})
	if err != nil || len(findings) != 0 {
		t.Fatalf("err %v, findings %v", err, findings)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	p := rows[0]
	if p.Line != 2 || p.Number != "0042" || p.Amount != 108630 || p.Memo != "=SUM(A1)" || p.Zip != "02134" ||
		p.BankRouting != "011000015" || p.BankAccount != "0001234567" {
		t.Errorf("row 2: %+v (account %q)", p, p.BankAccount)
	}
	if rows[1].BankAccount != "0987654321" || rows[1].Amount != 500 || rows[1].Line != 3 {
		t.Errorf("row 3: %v", rows[1])
	}
}

// TestNumberAccountRefused: a number cell in an identifier column refuses
// the whole file, naming the cell and the fix, without the account.
func TestNumberAccountRefused(t *testing.T) {
	row := texts("1", "10.00", "Rent", "Ann", "ann@example.com", "", "", "999900001", "")
	row[8] = num("1234567")
	data := one(t, payHeader, texts("2", "10.00", "Rent", "Bob", "bob@example.com", "", "", "999900001", "0001234567"), row)
	rows, _, err := payments(t, data, sheet.Options{})
	var fe *csvfile.FileError
	if !errors.As(err, &fe) || !fe.Damaged {
		t.Fatalf("err %v, want a damaged-file error", err)
	}
	if fe.Cell != "I3" || fe.Column != "bank_account" || fe.Line != 3 {
		t.Errorf("cell %q column %q line %d", fe.Cell, fe.Column, fe.Line)
	}
	msg := fe.Error()
	for _, want := range []string{"cell I3, column bank_account:", "format the column as Text", "leading zero"} {
		if !strings.Contains(strings.ToLower(msg), strings.ToLower(want)) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "1234567") {
		t.Errorf("message repeats the account: %s", msg)
	}
	_ = rows // rows passed before a FileError are discarded by the caller
}

// TestNumberAmounts: a number amount is read to the cent from its stored
// decimal, float noise included; a text amount as a CSV's.
func TestNumberAmounts(t *testing.T) {
	for _, tc := range []struct {
		stored string
		want   money.Cents
	}{
		{"1086.3", 108630}, {"0.29000000000000004", 29}, {"1086.3000000000002", 108630},
		{"0.28999999999999998", 29}, {"12", 1200}, {"1234567.89", 123456789},
	} {
		row := texts("1", "", "Rent", "Ann", "ann@example.com", "", "", "999900001", "0001234567")
		row[1] = num(tc.stored)
		rows, findings, err := payments(t, one(t, payHeader, row), sheet.Options{})
		if err != nil || len(findings) != 0 || len(rows) != 1 {
			t.Fatalf("%s: err %v findings %v rows %d", tc.stored, err, findings, len(rows))
		}
		if rows[0].Amount != tc.want {
			t.Errorf("%s: %d cents, want %d", tc.stored, rows[0].Amount, tc.want)
		}
	}
	// A real fraction of a cent is refused by the amount rule, naming the cell.
	row := texts("1", "", "Rent", "Ann", "ann@example.com", "", "", "999900001", "0001234567")
	row[1] = num("10.005")
	_, findings, err := payments(t, one(t, payHeader, row), sheet.Options{})
	if err != nil || len(findings) != 1 || findings[0].Cell != "B2" || findings[0].Column != "amount" {
		t.Fatalf("err %v findings %v", err, findings)
	}
	if !strings.HasPrefix(findings[0].String(), "cell B2, column amount: ") {
		t.Errorf("finding %q", findings[0])
	}
}

// TestDateSerial: a date cell is the day of its serial; a text date is
// read as a CSV's.
func TestDateSerial(t *testing.T) {
	row := texts("1", "10.00", "Rent", "Ann", "ann@example.com", "", "", "999900001", "0001234567")
	row[5] = cell{num: "46082", numFmt: 14} // 2026-03-01
	row2 := texts("2", "10.00", "Rent", "Bob", "bob@example.com", "2026-02-27", "", "999900001", "0001234567")
	rows, findings, err := payments(t, one(t, payHeader, row, row2), sheet.Options{})
	if err != nil || len(findings) != 0 || len(rows) != 2 {
		t.Fatalf("err %v findings %v rows %d", err, findings, len(rows))
	}
	if rows[0].AuthorizationDate != "2026-03-01" || rows[1].AuthorizationDate != "2026-02-27" {
		t.Errorf("dates %q %q", rows[0].AuthorizationDate, rows[1].AuthorizationDate)
	}
}

// TestBlankRowsIgnored: blank rows, between rows and at the end (even
// with cells that hold only spaces), are not rows.
func TestBlankRowsIgnored(t *testing.T) {
	data := one(t, payHeader,
		texts("1", "10.00", "Rent", "Ann", "ann@example.com", "", "", "999900001", "0001234567"),
		nil,
		texts("2", "10.00", "Rent", "Bob", "bob@example.com", "", "", "999900001", "0001234568"),
		texts("", " ", ""), nil, nil, texts(" "),
	)
	rows, findings, err := payments(t, data, sheet.Options{})
	if err != nil || len(findings) != 0 || len(rows) != 2 || rows[1].Line != 4 {
		t.Fatalf("err %v findings %v rows %v", err, findings, rows)
	}
}

// TestSheetByName: ingest.sheet picks a sheet other than the first, in
// any case; an unknown one is refused naming the sheets there are.
func TestSheetByName(t *testing.T) {
	data := build(t, map[string][][]cell{
		"Notes":    {texts("Read me first")},
		"Payments": {payHeader, texts("1", "10.00", "Rent", "Ann", "ann@example.com", "", "", "999900001", "0001234567")},
	}, "Notes", "Payments")
	rows, _, err := payments(t, data, sheet.Options{Sheet: "payments"})
	if err != nil || len(rows) != 1 {
		t.Fatalf("err %v rows %v", err, rows)
	}
	_, err = sheet.Open(bytes.NewReader(data), sheet.Options{Sheet: "Pay"})
	var fe *csvfile.FileError
	if !errors.As(err, &fe) || !strings.Contains(fe.Reason, `"Notes", "Payments"`) {
		t.Fatalf("err %v", err)
	}
	// The first sheet, by default, is not a payment file.
	if _, _, err := payments(t, data, sheet.Options{}); !errors.As(err, &fe) {
		t.Fatalf("first sheet: err %v", err)
	}
}

// TestFundingSourceSheet: a funding-source sheet is told by its header and
// read with its own identifier columns.
func TestFundingSourceSheet(t *testing.T) {
	hdr := texts("user_id", "firstName", "lastName", "email", "routing_number", "account_number", "account_type")
	ok := texts("", "Ann", "Smith", "ann@example.com", "011000015", "0001111000", "checking")
	data := one(t, hdr, ok)
	w := open(t, data, sheet.Options{})
	kind, err := sourcefile.DetectSource(w.Records(), opts())
	if err != nil || kind != payment.KindSources {
		t.Fatalf("kind %v err %v", kind, err)
	}
	var got []sourcefile.Row
	_, err = sourcefile.ParseSource(w.Records(), kind, opts(), func(r sourcefile.Row) error { got = append(got, r); return nil }, nil)
	if err != nil || len(got) != 1 || got[0].Account != "0001111000" || got[0].Routing != "011000015" {
		t.Fatalf("err %v rows %v", err, got)
	}
	bad := texts("", "Bob", "Jones", "bob@example.com", "011000015", "", "checking")
	bad[5] = num("1111000")
	w = open(t, one(t, hdr, ok, bad), sheet.Options{})
	_, err = sourcefile.ParseSource(w.Records(), kind, opts(), nil, nil)
	var fe *csvfile.FileError
	if !errors.As(err, &fe) || fe.Cell != "F3" || fe.Column != "account_number" || !fe.Damaged {
		t.Fatalf("err %v", err)
	}
}

// TestVerificationSheet: micro-deposit amounts typed as numbers.
func TestVerificationSheet(t *testing.T) {
	data := one(t, texts("funding_source_id", "amount1", "amount2"),
		[]cell{txt("3b241101-e2bb-4255-8caf-4136c566a962"), num("0.07"), num("0.15000000000000002")})
	w := open(t, data, sheet.Options{})
	kind, _ := sourcefile.DetectSource(w.Records(), opts())
	var got []sourcefile.Row
	_, err := sourcefile.ParseSource(w.Records(), kind, opts(), func(r sourcefile.Row) error { got = append(got, r); return nil }, nil)
	if err != nil || len(got) != 1 || got[0].Amounts[0] != 7 || got[0].Amounts[1] != 15 {
		t.Fatalf("kind %v err %v rows %v", kind, err, got)
	}
}

// TestFormulas: a formula's cached value is read; one without a value
// refuses the file naming the cell.
func TestFormulas(t *testing.T) {
	row := texts("1", "10.00", "Rent", "Ann", "ann@example.com", "", "", "999900001", "0001234567")
	row[2] = cell{formula: `"Re"&"nt"`}
	_, _, err := payments(t, one(t, payHeader, row), sheet.Options{})
	var fe *csvfile.FileError
	if !errors.As(err, &fe) || fe.Cell != "C2" || !strings.Contains(fe.Reason, "no value") {
		t.Fatalf("err %v", err)
	}
}

// TestNotAWorkbook: a CSV, a cut-short workbook and a zip that is no
// workbook are unreadable files with a reason, never a panic.
func TestNotAWorkbook(t *testing.T) {
	good := one(t, payHeader)
	for name, data := range map[string][]byte{
		"csv":       []byte("number,amount\n1,2\n"),
		"cut short": good[:len(good)/2],
		"empty zip": []byte("PK\x05\x06" + strings.Repeat("\x00", 18)),
		"magic":     []byte("PK\x03\x04garbage"),
	} {
		_, err := sheet.Open(bytes.NewReader(data), sheet.Options{})
		var fe *csvfile.FileError
		if !errors.As(err, &fe) || fe.Reason == "" {
			t.Errorf("%s: err %v, want a FileError", name, err)
		}
	}
	if _, err := sheet.Open(bytes.NewReader(good), sheet.Options{MaxBytes: 100}); err == nil ||
		!strings.Contains(err.Error(), "max_file_bytes") {
		t.Errorf("too large: %v", err)
	}
}

// TestBounds: a sheet with more rows or columns than allowed is refused.
func TestBounds(t *testing.T) {
	wide := make([]cell, 20)
	for i := range wide {
		wide[i] = txt("x")
	}
	_, err := sheet.Open(bytes.NewReader(one(t, wide)), sheet.Options{MaxColumns: 10})
	if err == nil || !strings.Contains(err.Error(), "20 columns") {
		t.Errorf("wide: %v", err)
	}
	_, err = sheet.Open(bytes.NewReader(one(t, texts("a"), texts("b"), texts("c"))), sheet.Options{MaxRows: 2})
	if err == nil || !strings.Contains(err.Error(), "more than 2 rows") {
		t.Errorf("long: %v", err)
	}
}

// TestDate1904: a workbook in the 1904 date system counts its serials
// from 1 January 1904.
func TestDate1904(t *testing.T) {
	f := excelize.NewFile()
	defer f.Close()
	yes := true
	if err := f.SetWorkbookProps(&excelize.WorkbookPropsOptions{Date1904: &yes}); err != nil {
		t.Fatal(err)
	}
	row := []any{"number", "amount", "memo", "name", "email", "authorization_date", "bank_routing", "bank_account"}
	if err := f.SetSheetRow("Sheet1", "A1", &row); err != nil {
		t.Fatal(err)
	}
	row = []any{"1", "10.00", "Rent", "Ann", "ann@example.com", nil, "999900001", "0001234567"}
	if err := f.SetSheetRow("Sheet1", "A2", &row); err != nil {
		t.Fatal(err)
	}
	st, _ := f.NewStyle(&excelize.Style{NumFmt: 14})
	if err := f.SetCellDefault("Sheet1", "F2", "44620"); err != nil { // 2026-03-01 in the 1904 system
		t.Fatal(err)
	}
	if err := f.SetCellStyle("Sheet1", "F2", "F2", st); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	rows, findings, err := payments(t, buf.Bytes(), sheet.Options{})
	if err != nil || len(findings) != 0 || len(rows) != 1 || rows[0].AuthorizationDate != "2026-03-01" {
		t.Fatalf("err %v findings %v rows %v", err, findings, rows)
	}
}
