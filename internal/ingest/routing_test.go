package ingest

import (
	"context"
	"errors"
	"testing"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
)

// A number the directory does not know refuses each of its rows, asked
// once; a directory that cannot be asked refuses nothing, is asked no
// more for the file, and is said once, outside the findings.
func TestRoutingCheck(t *testing.T) {
	row := func(line int, routing string) csvfile.Payment {
		return csvfile.Payment{Line: line, Payment: payment.Payment{BankRouting: routing}}
	}
	asked := map[string]int{}
	var findings []csvfile.Finding
	var unchecked []error
	rc := NewRoutingCheck(context.Background(), func(_ context.Context, r string) (string, error) {
		asked[r]++
		switch r {
		case "091999900":
			return "unknown bank", nil
		case "011000015":
			return "", errors.New("503")
		}
		return "", nil
	}, func(f csvfile.Finding) error { findings = append(findings, f); return nil }, func(err error) { unchecked = append(unchecked, err) })
	want := []bool{true, false, false, true, true, true}
	for i, r := range []string{"021000021", "091999900", "091999900", "011000015", "091999900", ""} {
		if ok, err := rc.Pass(row(i+2, r)); ok != want[i] || err != nil {
			t.Errorf("row %d (%s): pass %v %v", i+2, r, ok, err)
		}
	}
	if asked["091999900"] != 1 || asked["011000015"] != 1 || len(unchecked) != 1 || len(findings) != 2 || findings[0].Line != 3 {
		t.Errorf("asked %v, unchecked %v, findings %+v", asked, unchecked, findings)
	}
	if sum := rc.Adjust(csvfile.Summary{Rows: 6, Valid: 6}); sum.Valid != 4 || sum.Invalid != 2 || sum.Warnings != 0 {
		t.Errorf("summary %+v", sum)
	}
}
