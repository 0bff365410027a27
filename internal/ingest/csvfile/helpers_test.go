package csvfile

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// runDate is the run date of every test; dates in testdata are relative to it.
var runDate = time.Date(2025, 6, 15, 0, 0, 0, 0, time.UTC)

func testOpts() Options { return Options{RunDate: runDate, TestMode: true} }

type result struct {
	sum      Summary
	rows     []Payment
	findings []Finding
	err      error
}

// where lists findings as "line:column" for compact comparison.
func (r result) where() []string {
	out := make([]string, 0, len(r.findings))
	for _, f := range r.findings {
		out = append(out, fmt.Sprintf("%d:%s", f.Line, f.Column))
	}
	return out
}

func (r result) rowLines() []int {
	out := make([]int, 0, len(r.rows))
	for _, p := range r.rows {
		out = append(out, p.Line)
	}
	return out
}

func parseReader(in io.Reader, o Options) result {
	var res result
	res.sum, res.err = Parse(in, o,
		func(p Payment) error { res.rows = append(res.rows, p); return nil },
		func(f Finding) error { res.findings = append(res.findings, f); return nil })
	return res
}

func parseString(in string, o Options) result { return parseReader(strings.NewReader(in), o) }

func testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", name))
	if err != nil {
		t.Fatalf("read testdata: %v", err)
	}
	return b
}

func parseFile(t testing.TB, name string, o Options) result {
	return parseReader(bytes.NewReader(testdata(t, name)), o)
}

// allColumns is a header with every field, in spec order.
var allColumns = payment.FieldNames()

// baseRow is a valid test-mode row; cases override cells of it.
func baseRow() map[string]string {
	return map[string]string{
		"amount": "10.00", "memo": "Invoice 7", "name": "Ann Smith", "email": "ann@example.com",
		"bank_routing": SandboxRouting, "bank_account": "1111000016",
	}
}

// csvOf writes a file with every column and one line per row.
func csvOf(rows ...map[string]string) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write(allColumns)
	for _, r := range rows {
		rec := make([]string, len(allColumns))
		for i, c := range allColumns {
			rec[i] = r[c]
		}
		_ = w.Write(rec)
	}
	w.Flush()
	return b.String()
}

func with(over map[string]string) map[string]string {
	r := baseRow()
	for k, v := range over {
		r[k] = v
	}
	return r
}

func mustFileError(t *testing.T, err error) *FileError {
	t.Helper()
	fe, ok := err.(*FileError)
	if !ok {
		t.Fatalf("err = %v (%T), want *FileError", err, err)
	}
	return fe
}

func equal[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}
