package csvfile

import (
	"strings"
	"testing"
)

// TestRejectsShowWhatWasTyped: a rejects report shows a routing number as
// typed (public data; only one that could be an account number in the
// wrong column is masked), and a duplicate row's finding names only the
// columns the file has.
func TestRejectsShowWhatWasTyped(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"121000359":    "121000359", // nine digits, bad checksum: the typo to see
		"111100001612": "****1612",  // twelve digits: an account number in the wrong column
		"12-1000358":   "****0358",  // not a routing number's shape
	} {
		if got := ShowRouting(in); got != want {
			t.Errorf("ShowRouting(%q) = %q, want %q", in, got, want)
		}
	}
	res := parseString("amount,memo,name,email,bank_routing,bank_account\n"+
		"10.00,m,Ann,a@example.com,121000359,1111000016\n", testOpts())
	if len(res.findings) != 1 || res.findings[0].Value != "121000359" {
		t.Errorf("findings of a bad routing number %+v, want it shown as typed", res.findings)
	}

	row := "10.00,m,Ann,a@example.com," + SandboxRouting + ",1111000016"
	res = parseString("amount,memo,name,email,bank_routing,bank_account\n"+row+"\n"+row+"\n", testOpts())
	if len(res.findings) != 1 || strings.Contains(res.findings[0].Message, "authorization_date") ||
		!strings.Contains(res.findings[0].Message, "same payment as line 2") {
		t.Errorf("a repeated row in a file without authorization_date: %+v; want it found, naming no such column", res.findings)
	}
	res = parseString("amount,memo,name,email,bank_routing,bank_account,authorization_date\n"+row+",\n"+row+",\n", testOpts())
	if len(res.findings) != 1 || !strings.Contains(res.findings[0].Message, "authorization_date") {
		t.Errorf("a repeated row in a file with authorization_date: %+v; want the column named", res.findings)
	}
}
