package sheet_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/ingest/sheet"
	"github.com/batchd/batchd/internal/money"
)

// libreOffice reads a workbook LibreOffice Calc 7.4 wrote
// (testdata/spreadsheet/make.sh tells how).
func libreOffice(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "spreadsheet", name))
	if err != nil {
		t.Skipf("no LibreOffice fixture %s: %v", name, err)
	}
	return data
}

// TestLibreOfficeTextColumns: identifiers imported as Text are paid as
// typed, leading zeros kept; amounts LibreOffice stored as numbers
// (1086.3) are read to the cent.
func TestLibreOfficeTextColumns(t *testing.T) {
	rows, findings, err := payments(t, libreOffice(t, "text-columns.xlsx"), sheet.Options{})
	if err != nil || len(findings) != 0 {
		t.Fatalf("err %v findings %v", err, findings)
	}
	want := []struct {
		account, number string
		amount          money.Cents
	}{{"0001234567", "10001", 108630}, {"0987654321", "10002", 250000}, {"4400123456", "10003", 31245}}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, w := range want {
		if p := rows[i]; p.BankAccount != w.account || p.Number != w.number || p.Amount != w.amount || p.Line != i+2 {
			t.Errorf("row %d: %v (account %q)", i+2, p, p.BankAccount)
		}
	}
}

// TestLibreOfficeNumericAccount: a workbook whose account column stayed
// Standard (numbers) is refused whole, naming the cells C2 to C4.
func TestLibreOfficeNumericAccount(t *testing.T) {
	_, _, err := payments(t, libreOffice(t, "numeric-account.xlsx"), sheet.Options{})
	var fe *csvfile.FileError
	if !errors.As(err, &fe) || !fe.Damaged || fe.Cell != "C2" || fe.Column != "bank_account" {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{"cell C2, column bank_account: is a number cell", "(C2, C3, C4)", "Format the column as Text"} {
		if !strings.Contains(fe.Error(), want) {
			t.Errorf("message lacks %q: %s", want, fe.Error())
		}
	}
	for _, account := range []string{"1234567", "987654321", "4400123456"} {
		if strings.Contains(fe.Error(), account) {
			t.Errorf("message shows account %s: %s", account, fe.Error())
		}
	}
}
