package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/batchd/batchd/internal/ingest/sheet"
)

// TestTemplateCommand: `batchd template KIND --out F` writes the template,
// never over an existing file; a wrong kind is a usage error.
func TestTemplateCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "pay.xlsx")
	code, stdout, stderr := runBinary(t, nil, "template", "payments", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := f.GetRows(sheet.TemplateSheet)
	f.Close()
	if len(rows) != 1 || strings.Join(rows[0], ",") != strings.Join(sheet.TemplateColumns(sheet.TemplateKinds["payments"]), ",") {
		t.Errorf("header %q", rows)
	}
	before, _ := os.ReadFile(out)
	code, _, stderr = runBinary(t, nil, "template", "verifications", "--out", out)
	if after, _ := os.ReadFile(out); code == 0 || string(after) != string(before) || !strings.Contains(stderr, "already exists") {
		t.Errorf("overwrite: exit %d, changed %v, stderr %s", code, string(after) != string(before), stderr)
	}
	if code, _, stderr := runBinary(t, nil, "template", "cheques"); code != exitUsage || !strings.Contains(stderr, "funding-sources") {
		t.Errorf("unknown kind: exit %d, stderr %s", code, stderr)
	}
}

// TestValidateXLSX: `batchd validate` reads an XLSX workbook: a filled-in
// template passes with its leading zeros; a number account cell is
// refused naming the cell, without the number.
func TestValidateXLSX(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, account any) string {
		t.Helper()
		f := excelize.NewFile()
		defer f.Close()
		row := []any{"number", "amount", "memo", "name", "email", "bank_routing", "bank_account"}
		if err := f.SetSheetRow("Sheet1", "A1", &row); err != nil {
			t.Fatal(err)
		}
		row = []any{"0042", 1086.3, "Rent", "Ann", "ann@example.com", "999900001", account}
		if err := f.SetSheetRow("Sheet1", "A2", &row); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := f.SaveAs(path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.xlsx", "0001234567")
	code, out, errOut := runBinary(t, nil, "validate", "--test-mode", good)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	mustContainAll(t, "stdout", out, "1 rows, 1 valid, 0 invalid")

	bad := write("bad.xlsx", 1234567)
	code, out, errOut = runBinary(t, nil, "validate", "--test-mode", bad)
	if code != exitFailure {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	mustContainAll(t, "stdout", out, "cell G2, column bank_account: is a number cell", "Format the column as Text")
	if strings.Contains(out+errOut, "1234567") {
		t.Errorf("the account number is shown:\n%s%s", out, errOut)
	}

	// --sheet names another sheet; an unknown one is refused naming the sheets.
	code, out, _ = runBinary(t, nil, "validate", "--test-mode", "--sheet", "Payments", good)
	if code != exitFailure || !strings.Contains(out, `no sheet named "Payments"`) || !strings.Contains(out, `"Sheet1"`) {
		t.Errorf("--sheet: exit %d\n%s", code, out)
	}
	code, out, _ = runBinary(t, nil, "validate", "--test-mode", "--sheet", "sheet1", good)
	if code != 0 {
		t.Errorf("--sheet sheet1: exit %d\n%s", code, out)
	}

	// A workbook named .csv is refused with the fix.
	misnamed := filepath.Join(dir, "pay.csv")
	data, _ := os.ReadFile(good)
	if err := os.WriteFile(misnamed, data, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runBinary(t, nil, "validate", "--test-mode", misnamed)
	if code != exitFailure || !strings.Contains(out, "rename it to .xlsx") {
		t.Errorf("misnamed: exit %d\n%s", code, out)
	}
}

// TestTemplateSingularKind: "template payment" is "template payments",
// and likewise for every kind.
func TestTemplateSingularKind(t *testing.T) {
	dir := t.TempDir()
	for name, kind := range sheet.TemplateKinds {
		out := filepath.Join(dir, name+".xlsx")
		singular := strings.TrimSuffix(name, "s")
		if code, stdout, stderr := runMain(t, nil, "template", singular, "--out", out); code != exitOK ||
			!strings.Contains(stdout, "the "+name+" template") {
			t.Fatalf("template %s: exit %d\n%s%s", singular, code, stdout, stderr)
		}
		f, err := excelize.OpenFile(out)
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := f.GetRows(sheet.TemplateSheet)
		f.Close()
		if len(rows) != 1 || strings.Join(rows[0], ",") != strings.Join(sheet.TemplateColumns(kind), ",") {
			t.Errorf("template %s: header %q", singular, rows)
		}
	}
}
