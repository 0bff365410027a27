package ingest

import (
	"context"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

// FuzzApprovalLine feeds arbitrary lines to an approvals file's line
// check. Whatever the cells, nothing panics; the release rule is asked
// only for a line with a file, a positive line, four digits and an
// approver; a refused line says why; and no cell of more than four digits
// reaches the report whole.
func FuzzApprovalLine(f *testing.F) {
	f.Add("second.csv,2,5678,alice")
	f.Add("second.csv,x,5678,alice")
	f.Add("second.csv,2,0009995678,alice")
	f.Add(",0,56a8,")
	f.Add("a.csv,-3,1234")
	header := payment.KindApprovals.Columns()
	f.Fuzz(func(t *testing.T, line string) {
		asked := 0
		release := func(_ context.Context, a Approval) (bool, string, error) {
			asked++
			if a.File == "" || a.Line <= 0 || !fourDigits(a.Last4) || a.By == "" {
				t.Fatalf("release asked for %+v", a)
			}
			return true, "released", nil
		}
		r, err := applyApproval(context.Background(), release, NewLine(2, header, strings.Split(line, ",")))
		if err != nil {
			t.Fatal(err)
		}
		if (r.result == "released") != (asked == 1) || r.reason == "" {
			t.Fatalf("result %+v after %d releases", r, asked)
		}
		if len(r.last4) > 4 {
			t.Fatalf("account_last4 shown as %q", r.last4)
		}
	})
}
