package sourcefile

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
)

func TestKindOf(t *testing.T) {
	cases := map[string]payment.BatchKind{
		// payment files, and headers of no kind
		"amount,memo,name,email,bank_routing,bank_account":    payment.KindPayments,
		"AMOUNT,Memo,name,address,city,state,zip,token,store": payment.KindPayments,
		"":            payment.KindPayments,
		"foo,bar":     payment.KindPayments,
		"email,phone": payment.KindPayments, // shared columns tell nothing
		"amount,memo,name,routing_number,account_number": payment.KindPayments, // 3 to 2: a payment file with API names
		"amount,memo,user_id,routing_number":             payment.KindPayments, // a tie goes to payments
		// funding-source files
		"user_id,routing_number,account_number":                                    payment.KindSources,
		"firstName,lastName,email,phone,routing_number,account_number":             payment.KindSources,
		"FIRST_NAME,Last_Name,EMAIL,processor_token":                               payment.KindSources,
		" first_name , lastName ,email,processorToken":                             payment.KindSources,
		"user_id,processor_token,amount":                                           payment.KindSources,
		"user_id,email,routing_number,account_number,account_type,nickname,method": payment.KindSources,
		"user_id,routing_number,amount1":                                           payment.KindSources,
		// verification files
		"funding_source_id,amount1,amount2":       payment.KindVerifications,
		"source_id,amount1,amount2":               payment.KindVerifications,
		"SourceId,Amount1,Amount2":                payment.KindVerifications,
		"fundingSourceId,amount1,amount2,user_id": payment.KindVerifications,
		// approvals files: all four columns, any case, extra columns ignored
		"file,line,account_last4,approved_by":               payment.KindApprovals,
		"File,Line,AccountLast4,Approved_By,note":           payment.KindApprovals,
		"approved_by, account_last4 ,line,file,amount,memo": payment.KindApprovals,
		"file,line,account_last4":                           payment.KindPayments, // approved_by missing
	}
	for header, want := range cases {
		if got := KindOf(strings.Split(header, ",")); got != want {
			t.Errorf("KindOf(%q) = %q, want %q", header, got, want)
		}
	}
}

func TestDetect(t *testing.T) {
	detect := func(content string, o csvfile.Options) payment.BatchKind {
		t.Helper()
		k, err := Detect(strings.NewReader(content), o)
		if err != nil {
			t.Fatalf("Detect(%q): %v", content, err)
		}
		return k
	}
	o := testOpts()
	for name, want := range map[string]payment.BatchKind{
		"funding-sources.csv": payment.KindSources, "funding-sources-errors.csv": payment.KindSources,
		"verifications.csv": payment.KindVerifications, "verifications-errors.csv": payment.KindVerifications,
	} {
		if got := detect(string(testdata(t, name)), o); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if got := detect(string(testdata(t, "demo/customers.csv")), o); got != payment.KindSources {
		t.Errorf("demo/customers.csv: %q, want funding-sources", got)
	}
	if got := detect(string(testdata(t, "demo/invoices-links.csv")), o); got != payment.KindLinks {
		t.Errorf("demo/invoices-links.csv: %q, want payment-links", got)
	}
	// Every payment file of testdata stays a payment file, whatever is
	// wrong with it (the demo's funding-source and payment-link files aside).
	for _, dir := range []string{"csv", "demo"} {
		names, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", dir, "*"))
		if len(names) == 0 {
			t.Fatalf("no payment files in testdata/%s", dir)
		}
		for _, p := range names {
			if b := filepath.Base(p); b == "customers.csv" || b == "invoices-links.csv" {
				continue
			}
			if got := detect(string(testdata(t, filepath.Join(dir, filepath.Base(p)))), o); got != payment.KindPayments {
				t.Errorf("%s: %q, want payments", p, got)
			}
		}
	}
	// Another delimiter: the kind is told, and Parse explains the delimiter.
	semi := "user_id;routing_number;account_number\n" + sourceID + ";999900001;1111000001\n"
	if got := detect(semi, o); got != payment.KindSources {
		t.Errorf("semicolons: %q", got)
	}
	withSemi := o
	withSemi.Delimiter = ";"
	if got := detect(semi, withSemi); got != payment.KindSources {
		t.Errorf("semicolons, set: %q", got)
	}
	if got := detect("source_id\tamount1\tamount2\n", o); got != payment.KindVerifications {
		t.Errorf("tabs: %q", got)
	}
	// Ignored columns do not count.
	ignoring := o
	ignoring.IgnoreColumns = []string{" Nickname "}
	if got := detect("email,nickname,phone\n", ignoring); got != payment.KindPayments {
		t.Errorf("ignored nickname: %q", got)
	}
	if got := detect("email,nickname,phone\n", o); got != payment.KindSources {
		t.Errorf("nickname: %q", got)
	}
	// Unreadable headers are payment files' (csvfile explains them).
	for _, content := range []string{"", "\xff\xfeu\x00", "a,\x00b\n", "\"open,quote\n", "caf\xe9\n"} {
		if got := detect(content, o); got != payment.KindPayments {
			t.Errorf("%q: %q", content, got)
		}
	}
	bad := o
	bad.Delimiter = "|"
	if _, err := Detect(strings.NewReader("user_id\n"), bad); err == nil {
		t.Error("a bad delimiter is not an error")
	}
	if _, err := Detect(&failingReader{}, o); err == nil {
		t.Error("a read failure is not an error")
	}
}

type failingReader struct{}

func (*failingReader) Read([]byte) (int, error) { return 0, bytes.ErrTooLarge }

func TestKindOfEdits(t *testing.T) {
	cases := map[string]payment.BatchKind{
		"check_id,amount,bank_routing,bank_account":                                        payment.KindEdits,
		"File,Line,Memo,Name,BankRouting,BankAccount":                                      payment.KindEdits,
		"check_id,file,line,amount,number,label,memo,name,email,bank_routing,bank_account": payment.KindEdits,
		"check_id,amount": payment.KindPayments, // no bank_account: no edit file
		"number,amount,label,memo,name,bank_routing,bank_account": payment.KindPayments,
		"check_id,reason,bank_account":                            payment.KindCancels, // reason: a cancel file's
		"file,line,account_last4,approved_by,bank_account":        payment.KindApprovals,
	}
	for header, want := range cases {
		if got := KindOf(strings.Split(header, ",")); got != want {
			t.Errorf("KindOf(%q) = %q, want %q", header, got, want)
		}
	}
	for _, name := range []string{"check_id", "file", "line"} {
		if payment.FieldIndex(name) >= 0 {
			t.Errorf("%s is a payment field: a payment file could be taken for an edit file", name)
		}
	}
}

// No header is taken for two of the kinds ingest applies: every set of
// the columns their rules read matches at most one rule.
func TestAppliedKindsNeverCompete(t *testing.T) {
	cols := []string{"check_id", "file", "line", "label", "number", "reason", "amount", "bank_account",
		"approved_by", "account_last4", "invoice", "checkout_token", "name"}
	for set := range 1 << len(cols) {
		var header []string
		for i, c := range cols {
			if set&(1<<i) != 0 {
				header = append(header, c)
			}
		}
		has := func(c string) bool { return slices.Contains(header, c) }
		var matched []payment.BatchKind
		for _, k := range payment.Kinds() {
			if k.Header.Matches(has) {
				matched = append(matched, k.Kind)
			}
		}
		if len(matched) > 1 {
			t.Errorf("header %q is taken for %v", header, matched)
		}
	}
}
