package csvfile

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse, with each delimiter. Whatever
// the input, Parse must not panic, and either reject the file with a
// FileError or account for every row: each row reaches onRow or has at
// least one finding of severity Error, never both (a valid row may have
// warnings), and every line named lies within the input.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"csv/valid.csv", "csv/excel_bom_crlf.csv", "csv/quoted_comma_newline.csv",
		"csv/upper_case_headers.csv", "csv/unknown_column.csv", "csv/empty.csv", "csv/header_only.csv",
		"csv/binary.bin", "csv/invalid_rows.csv", "csv/duplicates.csv", "demo/vendors-errors.csv",
		"csv/semicolons.csv", "csv/tabs.csv", "csv/lost_zeros.csv", "csv/lost_zeros_zip.csv",
		"csv/rounded_accounts.csv", "csv/question_marks.csv", "csv/windows1252.csv", "spreadsheet/resaved.csv",
		"spreadsheet/semicolon-quoted.csv", "spreadsheet/tab.csv"} {
		f.Add(testdata(f, name))
	}
	f.Add([]byte(csvOf(baseRow(), with(map[string]string{"recurring": "1"}))))
	f.Add([]byte("amount,memo,name,email,bank_routing,bank_account,\n1,\"a\nb\",c,d@e.f,999900001,1111000016,x\n"))
	f.Add([]byte("amount,memo,name,address,token,store\r\n1,m,n,a,\"" + token36 + "\",s\r\n,,,,,\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, sep := range []string{",", ";", "\t"} {
			o := testOpts()
			o.MaxRecordBytes = 1 << 12
			o.Delimiter = sep
			checkParse(t, data, parseReader(bytes.NewReader(data), o))
		}
	})
}

// checkParse asserts FuzzParse's invariants on the result of parsing data.
func checkParse(t *testing.T, data []byte, res result) {
	t.Helper()
	lines := lineCount(data)
	if res.err != nil {
		var fe *FileError
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
		if fd.Severity == Warning {
			warnings++
		} else {
			bad[fd.Line] = true
		}
	}
	if len(bad) != s.Invalid || warnings != s.Warnings {
		t.Fatalf("%d rows with errors and %d warnings, summary %+v", len(bad), warnings, s)
	}
	for _, p := range res.rows {
		if bad[p.Line] || p.Line < 2 || p.Line > lines || p.Amount <= 0 {
			t.Fatalf("row %+v has errors, a bad line, or no amount", p)
		}
	}
}

// lineCount is the number of physical lines in data, counting a last line
// without a line break.
func lineCount(data []byte) int {
	return bytes.Count(data, []byte{'\n'}) + 1
}
