package csvfile

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

// TestNoAccountNumberInFindings runs every file with account numbers through
// Parse, in both modes, and looks for any account cell of the file (with at
// least 4 characters) in any finding's String, Value or Message, and in the
// FileError.
func TestNoAccountNumberInFindings(t *testing.T) {
	files := []string{"csv/valid.csv", "csv/invalid_rows.csv", "csv/duplicates.csv",
		"csv/quoted_comma_newline.csv", "demo/vendors-errors.csv", "demo/payroll-clean.csv",
		"csv/rounded_accounts.csv", "csv/question_marks.csv", "csv/lost_zeros.csv", "csv/lost_zeros_zip.csv"}
	extra := csvOf(
		with(map[string]string{"bank_account": "98765432109876543210"}),                       // too long
		with(map[string]string{"bank_account": "12345678", "bank_routing": "87654321"}),       // bad routing
		with(map[string]string{"bank_routing": "123456789012", "bank_account": ""}),           // account typed as routing
		with(map[string]string{"bank_account": "5555666677", "token": token36, "store": "s"}), // both pairs
		with(map[string]string{"bank_account": "'5555666678"}),
		with(map[string]string{"bank_account": "4444-3333-2222"}),
	)
	for _, live := range []bool{false, true} {
		for _, name := range append(files, "extra") {
			data := []byte(extra)
			if name != "extra" {
				data = testdata(t, name)
			}
			o := testOpts()
			o.TestMode = !live
			res := parseReader(bytes.NewReader(data), o)
			secrets := accountCells(t, data)
			secrets = append(secrets, "123456789012", token36)
			for _, f := range res.findings {
				for _, s := range secrets {
					for _, text := range []string{f.String(), f.Value, f.Message} {
						if strings.Contains(text, s) {
							t.Errorf("%s: finding %q leaks %q", name, text, s)
						}
					}
				}
			}
			var fe *FileError
			switch {
			case errors.As(res.err, &fe) && fe.Damaged:
				for _, s := range secrets {
					if strings.Contains(fe.Error(), s) {
						t.Errorf("%s: verdict %q leaks %q", name, fe, s)
					}
				}
			case res.err != nil:
				t.Errorf("%s: %v", name, res.err)
			}
			if name == "extra" && len(res.findings) < 6 {
				t.Errorf("extra rows: only %d findings", len(res.findings))
			}
		}
	}
}

// accountCells returns the bank_account and token cells of a CSV file.
func accountCells(t *testing.T, data []byte) []string {
	t.Helper()
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, name := range recs[0] {
		if n := normalizeName(name); n != "bank_account" && n != "token" {
			continue
		}
		for _, rec := range recs[1:] {
			if i < len(rec) && len(strings.TrimSpace(rec[i])) >= 4 {
				out = append(out, strings.TrimSpace(rec[i]))
			}
		}
	}
	return out
}

func TestNoAccountNumberInHeaderError(t *testing.T) {
	// A file without a header row: its first row is data.
	res := parseString("999900001,1111000016,10.00\n", testOpts())
	fe := mustFileError(t, res.err)
	if strings.Contains(fe.Error(), "1111000016") || strings.Contains(fe.Error(), "999900001") {
		t.Errorf("header error repeats data: %v", fe)
	}
}

func TestPaymentFormattingMasks(t *testing.T) {
	p := Payment{Line: 2, Payment: payment.Payment{Amount: 100, BankRouting: SandboxRouting, BankAccount: "1111000016", Name: "Ann"}}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("row", "payment", p)
	tp := Payment{Payment: payment.Payment{Token: token36, Store: "s"}}
	for _, s := range []string{p.String(), fmt.Sprintf("%v %+v %#v %s", p, p, p, p), logged.String(),
		tp.String(), fmt.Sprint(tp)} {
		if strings.Contains(s, "1111000016") || strings.Contains(s, token36) {
			t.Errorf("formatted payment leaks: %s", s)
		}
	}
	if !strings.Contains(p.String(), "****0016") {
		t.Errorf("String = %s", p)
	}
}
