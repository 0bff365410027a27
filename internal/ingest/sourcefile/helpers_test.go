package sourcefile

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

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
)

// runDate is after funding.DeprecationDate; before is the day before it.
var (
	runDate = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	before  = time.Date(2026, 6, 7, 0, 0, 0, 0, time.UTC)
)

func testOpts() csvfile.Options { return csvfile.Options{RunDate: runDate, TestMode: true} }

type result struct {
	sum      csvfile.Summary
	rows     []Row
	findings []csvfile.Finding
	err      error
}

// where lists findings as "line:column" for compact comparison.
func (r result) where() []string {
	out := []string{}
	for _, f := range r.findings {
		out = append(out, fmt.Sprintf("%d:%s", f.Line, f.Column))
	}
	return out
}

func (r result) rowLines() []int {
	out := []int{}
	for _, row := range r.rows {
		out = append(out, row.Line)
	}
	return out
}

func parseReader(kind payment.BatchKind, in io.Reader, o csvfile.Options) result {
	var res result
	res.sum, res.err = Parse(in, kind, o,
		func(r Row) error { res.rows = append(res.rows, r); return nil },
		func(f csvfile.Finding) error { res.findings = append(res.findings, f); return nil })
	return res
}

func parseString(kind payment.BatchKind, in string, o csvfile.Options) result {
	return parseReader(kind, strings.NewReader(in), o)
}

func testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", name))
	if err != nil {
		t.Fatalf("read testdata: %v", err)
	}
	return b
}

// sourceColumns is a funding-source header with every column.
var sourceColumns = []string{"user_id", "first_name", "last_name", "email", "phone", "routing_number",
	"account_number", "account_type", "nickname", "method", "processor_token"}

// token is a processor token as the sandbox issues them.
const token = "processor-sandbox-5f8a1c2e-1b1f-4f4e-9a53-0c6a6f1d2b7e"

// baseSource is a valid on-demand row for a new customer.
func baseSource() map[string]string {
	return map[string]string{"first_name": "Ann", "last_name": "Smith", "email": "ann@example.com",
		"routing_number": csvfile.SandboxRouting, "account_number": "1111000001"}
}

func with(base map[string]string, over map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// csvOf writes a file of the columns cols with one line per row.
func csvOf(cols []string, rows ...map[string]string) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write(cols)
	for _, r := range rows {
		rec := make([]string, len(cols))
		for i, c := range cols {
			rec[i] = r[c]
		}
		_ = w.Write(rec)
	}
	w.Flush()
	return b.String()
}

func sources(rows ...map[string]string) string { return csvOf(sourceColumns, rows...) }

var verifyColumns = []string{"funding_source_id", "amount1", "amount2"}

const sourceID = "3b241101-e2bb-4255-8caf-4136c566a962"

func baseVerify() map[string]string {
	return map[string]string{"funding_source_id": sourceID, "amount1": "0.07", "amount2": "0.15"}
}

func verifications(rows ...map[string]string) string { return csvOf(verifyColumns, rows...) }

func mustFileError(t *testing.T, err error) *csvfile.FileError {
	t.Helper()
	fe, ok := err.(*csvfile.FileError)
	if !ok {
		t.Fatalf("err = %v (%T), want *csvfile.FileError", err, err)
	}
	return fe
}

func equal[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// noSecret fails when any output of res shows the token.
func noSecret(t *testing.T, res result, secret string) {
	t.Helper()
	var b bytes.Buffer
	for _, f := range res.findings {
		fmt.Fprintf(&b, "%s|%s|%s|%+v\n", f, f.Value, f.Message, f)
	}
	for _, r := range res.rows {
		fmt.Fprintf(&b, "%v %+v %#v %s\n", r, r, r, r.LogValue())
	}
	if res.err != nil {
		b.WriteString(res.err.Error())
	}
	if strings.Contains(b.String(), secret) {
		t.Fatalf("output shows the token:\n%s", b.String())
	}
}
