package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `batchd demo --date` runs the demo on the day given: the day before
// Thanksgiving lets six calendar days pass for three business days, and no
// check is left in process. A malformed date is a usage error.
func TestDemoOnADate(t *testing.T) {
	code, out, errOut := runMain(t, nil, "demo", "--dir", filepath.Join(t.TempDir(), "demo"), "--date", "2026-11-25")
	if code != exitOK || !strings.Contains(out, "let 3 business days pass\n   6 calendar days, Wed 25 Nov 2026 to Tue 1 Dec 2026:") ||
		strings.Contains(out, "still in process") || !strings.Contains(out, "printed") {
		t.Fatalf("demo --date 2026-11-25: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = runMain(t, nil, "demo", "--date", "25/11/2026")
	if code != exitUsage || !strings.Contains(errOut, `--date: want YYYY-MM-DD, got "25/11/2026"`) {
		t.Fatalf("demo --date 25/11/2026: exit %d\n%s", code, errOut)
	}
}

// `batchd demo --file F` rehearses the person's own file, given twice for
// two files; a file that cannot be read is an error naming it.
func TestDemoFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	row := "amount,memo,name,email,bank_routing,bank_account,number\n10.00,m,Ann,ann@example.com,021000021,123456789012,%d\n"
	os.WriteFile(a, []byte(fmt.Sprintf(row, 1)), 0o600)
	os.WriteFile(b, []byte(fmt.Sprintf(row, 2)), 0o600)
	code, out, errOut := runMain(t, nil, "demo", "--dir", filepath.Join(dir, "demo"), "--date", "2026-03-02", "--file", a, "--file", b)
	if code != exitOK || !strings.Contains(out, "inbox/a.csv: 1 rows") || !strings.Contains(out, "inbox/b.csv: 1 rows") ||
		!strings.Contains(out, "2 checks created") || strings.Contains(out, "payroll-clean") {
		t.Fatalf("demo --file a --file b: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = runMain(t, nil, "demo", "--dir", filepath.Join(dir, "demo2"), "--file", filepath.Join(dir, "missing.csv"))
	if code == exitOK || !strings.Contains(errOut, "missing.csv") {
		t.Fatalf("demo --file of a missing file: exit %d\n%s", code, errOut)
	}
}
