package csvfile

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse. Whatever the input, Parse must
// not panic, and either reject the file with a FileError or account for
// every row: each row reaches onRow or has at least one finding, never both,
// and every line named lies within the input.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"csv/valid.csv", "csv/excel_bom_crlf.csv", "csv/quoted_comma_newline.csv",
		"csv/upper_case_headers.csv", "csv/unknown_column.csv", "csv/empty.csv", "csv/header_only.csv",
		"csv/binary.bin", "csv/invalid_rows.csv", "csv/duplicates.csv", "demo/vendors-errors.csv"} {
		f.Add(testdata(f, name))
	}
	f.Add([]byte(csvOf(baseRow(), with(map[string]string{"recurring": "1"}))))
	f.Add([]byte("amount,memo,name,email,bank_routing,bank_account,\n1,\"a\nb\",c,d@e.f,999900001,1111000016,x\n"))
	f.Add([]byte("amount,memo,name,address,token,store\r\n1,m,n,a,\"" + token36 + "\",s\r\n,,,,,\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o := testOpts()
		o.MaxRecordBytes = 1 << 12
		res := parseReader(bytes.NewReader(data), o)
		if res.err != nil {
			var fe *FileError
			if !errors.As(res.err, &fe) {
				t.Fatalf("error is not a FileError: %v", res.err)
			}
			if fe.Line < 0 || fe.Line > lineCount(data) {
				t.Fatalf("FileError line %d outside 0..%d", fe.Line, lineCount(data))
			}
			return
		}
		s := res.sum
		if s.Rows != s.Valid+s.Invalid || s.Rows == 0 || len(res.rows) != s.Valid {
			t.Fatalf("summary %+v with %d rows delivered", s, len(res.rows))
		}
		lines := lineCount(data)
		bad := map[int]bool{}
		last := 0
		for _, fd := range res.findings {
			if fd.Line < 2 || fd.Line > lines || fd.Line < last || fd.Message == "" {
				t.Fatalf("finding %+v out of order or outside lines 2..%d", fd, lines)
			}
			last = fd.Line
			bad[fd.Line] = true
		}
		if len(bad) != s.Invalid {
			t.Fatalf("%d rows with findings, summary says %d invalid", len(bad), s.Invalid)
		}
		for _, p := range res.rows {
			if bad[p.Line] || p.Line < 2 || p.Line > lines || p.Amount <= 0 {
				t.Fatalf("row %+v has findings, a bad line, or no amount", p)
			}
		}
	})
}

// lineCount is the number of physical lines in data, counting a last line
// without a line break.
func lineCount(data []byte) int {
	return bytes.Count(data, []byte{'\n'}) + 1
}
