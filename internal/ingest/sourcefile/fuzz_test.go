package sourcefile

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
)

// FuzzParse feeds arbitrary bytes to Detect and to Parse as both kinds,
// with each delimiter. Whatever the input, nothing panics; Detect fails
// only for a read error (never here); and Parse either rejects the file
// with a FileError or accounts for every row: each row reaches onRow or
// has at least one finding of severity Error, never both, every line named
// lies within the input, every row has the method its kind allows, and no
// finding on the processor_token column shows more than its length.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"funding-sources.csv", "funding-sources-errors.csv", "verifications.csv",
		"verifications-errors.csv", "csv/valid.csv", "csv/binary.bin", "csv/windows1252.csv"} {
		f.Add(testdata(f, name))
	}
	f.Add([]byte(sources(src(nil), tokenRow(nil), src(map[string]string{"routing_number": "11000015"}))))
	f.Add([]byte("user_id;processor_token\n" + sourceID + ";" + token + "\n"))
	f.Add([]byte("source_id\tamount1\tamount2\n" + sourceID + "\t0.07\t7\n"))
	f.Add([]byte("file,line,account_last4,approved_by\nsecond.csv,2,5678,alice\n"))
	f.Add([]byte("File;Line;Account_Last4;Approved_By;note\n\"a;b.csv\";x;12345678;\n"))
	f.Add([]byte("first_name,last_name,email,,processor_token\n\"a\nb\",c,d@e.fg,x,tok\n,,,,\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, sep := range []string{",", ";", "\t"} {
			o := testOpts()
			o.MaxRecordBytes = 1 << 12
			o.Delimiter = sep
			if _, err := Detect(bytes.NewReader(data), o); err != nil {
				t.Fatalf("Detect: %v", err)
			}
			for _, kind := range []payment.BatchKind{payment.KindSources, payment.KindVerifications} {
				checkParse(t, data, kind, parseReader(kind, bytes.NewReader(data), o))
			}
		}
	})
}

// checkParse asserts FuzzParse's invariants on the result of parsing data.
func checkParse(t *testing.T, data []byte, kind payment.BatchKind, res result) {
	t.Helper()
	lines := bytes.Count(data, []byte{'\n'}) + 1
	for _, f := range res.findings {
		if f.Column == "processor_token" && f.Value != csvfile.EmptyValue && !strings.HasPrefix(f.Value, "…(") {
			t.Fatalf("finding %+v shows the token", f)
		}
	}
	if res.err != nil {
		var fe *csvfile.FileError
		if !errors.As(res.err, &fe) {
			t.Fatalf("error is not a FileError: %v", res.err)
		}
		if fe.Line < 0 || fe.Line > lines || fe.Reason == "" || (fe.Damaged && fe.Line < 2) {
			t.Fatalf("FileError %+v: line outside 0..%d, or no reason", fe, lines)
		}
		return
	}
	s := res.sum
	if s.Rows != s.Valid+s.Invalid || s.Rows == 0 || len(res.rows) != s.Valid {
		t.Fatalf("summary %+v with %d rows delivered", s, len(res.rows))
	}
	bad := map[int]bool{}
	last, warnings := 0, 0
	for _, fd := range res.findings {
		if fd.Line < 2 || fd.Line > lines || fd.Line < last || fd.Message == "" || fd.Value == "" {
			t.Fatalf("finding %+v out of order, outside lines 2..%d, or without a message or value", fd, lines)
		}
		last = fd.Line
		if fd.Severity == csvfile.Warning {
			warnings++
		} else {
			bad[fd.Line] = true
		}
	}
	if len(bad) != s.Invalid || warnings != s.Warnings {
		t.Fatalf("%d rows with errors and %d warnings, summary %+v", len(bad), warnings, s)
	}
	for _, r := range res.rows {
		if bad[r.Line] || r.Line < 2 || r.Line > lines {
			t.Fatalf("row %v has errors or a bad line", r)
		}
		switch r.Method {
		case funding.Verify:
			ok := kind == payment.KindVerifications && r.SourceID != "" && r.Amounts[0] >= 1 && r.Amounts[0] <= 99 &&
				r.Amounts[1] >= 1 && r.Amounts[1] <= 99
			if !ok {
				t.Fatalf("verification row %v", r)
			}
		case funding.Processor:
			if kind != payment.KindSources || r.ProcessorToken == "" || r.Account != "" {
				t.Fatalf("processor row %v", r)
			}
		case funding.OnDemand, funding.MicroDeposits:
			if kind != payment.KindSources || len(r.Routing) != 9 || r.Account == "" || r.AccountType == "" || r.ProcessorToken != "" {
				t.Fatalf("account row %v", r)
			}
		default:
			t.Fatalf("row %v has no method", r)
		}
		if kind == payment.KindSources && r.UserID == "" && (r.Customer.FirstName == "" || r.Customer.LastName == "" || r.Customer.Email == "") {
			t.Fatalf("row %v names no customer", r)
		}
	}
}
