package csvfile

import (
	"strings"
	"testing"
)

// The smaller spreadsheet items of issue 18: the separator of a quoted
// export, "?" inside web addresses, and each finding said once.

// TestQuotedExportNamesSeparator: LibreOffice's semicolon and tab exports
// with "quote all text cells" (testdata/spreadsheet, written by LibreOffice
// 7.4) cannot be read with commas at all; the refusal names the separator
// and the setting, and with that setting the file reads.
func TestQuotedExportNamesSeparator(t *testing.T) {
	for _, c := range []struct{ file, sep, want string }{
		{"spreadsheet/semicolon-quoted.csv", ";", `line 1: this file uses semicolons between cells; save it as CSV with commas, or set ingest.delimiter: ";"`},
		{"spreadsheet/tab.csv", "\t", `line 1: this file uses tabs between cells; save it as CSV with commas, or set ingest.delimiter: "\t"`},
	} {
		res := parseFile(t, c.file, testOpts())
		if fe := mustFileError(t, res.err); fe.Error() != c.want || fe.Damaged {
			t.Errorf("%s: FileError = %q, want %q", c.file, fe, c.want)
		}
		o := testOpts()
		o.Delimiter = c.sep
		res = parseFile(t, c.file, o)
		if res.err != nil || res.sum != (Summary{Rows: 3, Valid: 3}) {
			t.Errorf("%s with ingest.delimiter %q: %+v, %v, findings %v", c.file, c.sep, res.sum, res.err, res.findings)
		}
	}
	// Set to semicolons, a quoted tab export names tabs and the setting in force.
	o := testOpts()
	o.Delimiter = ";"
	fe := mustFileError(t, parseFile(t, "spreadsheet/tab.csv", o).err)
	if want := `this file uses tabs between cells, but ingest.delimiter: ";" is set`; !strings.Contains(fe.Error(), want) {
		t.Errorf("FileError = %q, want %q", fe, want)
	}
	// A quote left open in a comma file is still a quoting error.
	fe = mustFileError(t, parseString("amount,\"memo,name\n", testOpts()).err)
	if strings.Contains(fe.Error(), "between cells") {
		t.Errorf("an open quote taken for a separator: %q", fe)
	}
}

func TestLostLettersNotInWebAddresses(t *testing.T) {
	for _, c := range []struct {
		memo string
		warn bool
	}{
		{"See https://x.example/p?x=1", false},
		{"Receipt www.example.com/?a=b&c=d", false},
		{"https://pay.example/inv?id=7&page=2 paid", false},
		{"Receipt WWW.EXAMPLE.COM/r?ref=9", false},
		{"Jos? Garc?a", true},
		{"https://x.example/p?x=1 for Jos? Garc?a", true},
		{"M?ller https://x.example/p?x=1", true},
		{"https://x.example/M?ller", true}, // no name= after the "?"
		{"p?x=1 without an address", true},
		{"?ukasz", true},
		{"Paid?", false},
	} {
		if got := lossyText(c.memo, false); got != c.warn {
			t.Errorf("lossyText(%q) = %v, want %v", c.memo, got, c.warn)
		}
	}
}

// TestLostZeroVerdictRestatesNoFinding: the file-level verdict on a
// routing number that lost its zero says the cell in Error (for
// failed/<file>.error.txt, where no finding is shown) but not in Verdict,
// which batchd validate prints after the finding on that cell.
func TestLostZeroVerdictRestatesNoFinding(t *testing.T) {
	live := testOpts()
	live.TestMode = false
	res := parseString("amount,memo,name,email,bank_routing,bank_account\n"+
		"10.00,Invoice 1,Ann Smith,ann@example.com,11000015,1234567\n"+
		"20.00,Invoice 2,Bob Jones,bob@example.com,121000358,987654321\n", live)
	fe := mustFileError(t, res.err)
	equal(t, "findings", res.where(), []string{"2:bank_routing"})
	if !fe.Damaged || !strings.Contains(fe.Error(), "line 2, column bank_routing: routing number ****0015 has 8 digits") {
		t.Errorf("Error() = %q", fe.Error())
	}
	if v := fe.Verdict(); strings.Contains(v, "****0015") || strings.Contains(v, "has 8 digits") ||
		!strings.Contains(v, "every row of this file is refused") {
		t.Errorf("Verdict() = %q", v)
	}
	if fe := (&FileError{Line: 3, Reason: "x"}); fe.Verdict() != "line 3: x" {
		t.Errorf("Verdict of a FileError without a cell = %q", fe.Verdict())
	}
}
