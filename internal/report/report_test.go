package report

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestSafe(t *testing.T) {
	cases := map[string]string{
		"=1+1":                 "'=1+1",
		"+SUM(A1)":             "'+SUM(A1)",
		"-2+3":                 "'-2+3",
		"-50.00":               "-50.00",
		"+3":                   "+3",
		"-":                    "'-",
		"-.5":                  "'-.5",
		"-5.":                  "'-5.",
		"-1e5":                 "'-1e5",
		" -5":                  "' -5",
		"@cmd":                 "'@cmd",
		"\t=1":                 "'\t=1",
		"\r=1":                 "'\r=1",
		"  =HYPERLINK(\"x\")":  "'  =HYPERLINK(\"x\")",
		"＝1":                   "'＝1",
		"Acme, Inc.":           "Acme, Inc.",
		"1234.56":              "1234.56",
		"":                     "",
		"O'Brien":              "O'Brien",
		"bad\xffutf8":          "bad\uFFFDutf8",
		"=cmd|' /C calc'!'A0'": "'=cmd|' /C calc'!'A0'",
	}
	for in, want := range cases {
		if got := Safe(in); got != want {
			t.Errorf("Safe(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	rows := [][]string{
		{"line", "name", "memo"},
		{"3", "Acme, \"Inc\"", "two\nlines"},
		{"4", "=evil()", ""},
	}
	for _, r := range rows {
		if err := w.Write(r...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.HasPrefix(out, BOM) || !strings.Contains(out, "\r\n") {
		t.Fatalf("missing BOM or CRLF: %q", out)
	}
	got, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(out, BOM))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got[1][1] != `Acme, "Inc"` || got[1][2] != "two\nlines" || got[2][1] != "'=evil()" {
		t.Fatalf("round trip: %q", got)
	}
	if !strings.Contains(out, `"3","Acme, ""Inc""`) {
		t.Fatalf("cells not all quoted: %q", out)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r", "status.csv")
	if err := WriteFile(path, func(w *Writer) error { return w.Write("a") }); err != nil {
		t.Fatal(err)
	}
	failing := func(w *Writer) error { w.Write("b"); return os.ErrClosed }
	if err := WriteFile(path, failing); err == nil {
		t.Fatal("want error from fill")
	}
	b, _ := os.ReadFile(path)
	if string(b) != BOM+"\"a\"\r\n" {
		t.Fatalf("old report not kept intact: %q", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}
}

func FuzzSafe(f *testing.F) {
	for _, s := range []string{"=1", "-", "plain", " @x", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Safe(s)
		trim := strings.TrimLeft(out, " ")
		if trim != "" && strings.ContainsRune("=+-@\t\r\n＝＋－＠", []rune(trim)[0]) && !plainNumber(out) {
			t.Fatalf("Safe(%q) = %q still starts with a formula character and is no plain number", s, out)
		}
		if plainNumber(out) {
			if _, err := strconv.ParseFloat(out, 64); err != nil || out != s {
				t.Fatalf("Safe(%q) = %q passed as a plain number, which it is not", s, out)
			}
		}
	})
}
