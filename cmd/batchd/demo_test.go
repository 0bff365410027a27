package main

import (
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
