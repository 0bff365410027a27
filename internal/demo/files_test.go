package demo

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/clocktest"
)

// TestRehearseOwnFile: `batchd demo --file F` runs a person's CSV through
// the whole job on the machine's own sandbox and prints the file's
// results; the copy carries the sandbox's test bank details, so no real
// account or routing number is left anywhere in the demo's directory
// (ledger, spool, archive, reports, log), and the original is untouched.
func TestRehearseOwnFile(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "my payroll.csv")
	body := "amount,memo,name,email,bank_routing,bank_account,number\n" +
		"12.34,Invoice 1,Ann Smith,ann@example.com,021000021,123456789012,1001\n" +
		"56.78,Invoice 2,Bob Jones,bob@example.com,011000015,98765432101,1002\n" +
		"7.00,Invoice 3,Ann Smith,ann@example.com,021000021,123456789012,1003\n"
	if err := os.WriteFile(mine, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{Dir: filepath.Join(dir, "demo"), Out: &out, Date: clocktest.Monday, Files: []string{mine}})
	if err != nil {
		t.Fatalf("demo --file: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"my payroll.csv -> inbox/my payroll.csv: 3 rows; 2 account numbers replaced", "nothing is sent anywhere else",
		"accepted", "3 checks created", "results report: my payroll.csv.results.csv"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the rehearsal's output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "payroll-clean.csv") {
		t.Fatalf("the samples were run beside the person's file:\n%s", text)
	}
	results, err := os.ReadFile(filepath.Join(res.Outbox, "my payroll.csv.results.csv"))
	if err != nil || strings.Count(string(results), "\n") != 4 {
		t.Fatalf("the file's results report: %v\n%s", err, results)
	}
	err = filepath.WalkDir(res.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil // a socket
		}
		for _, real := range []string{"123456789012", "98765432101", "021000021", "011000015"} {
			if bytes.Contains(b, []byte(real)) {
				t.Errorf("%s holds the real bank detail %s", p, real)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(mine); string(b) != body {
		t.Fatal("the person's file was changed")
	}
}
