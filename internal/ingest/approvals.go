package ingest

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
	"github.com/batchd/batchd/internal/report"
)

// Approval is one line of an approvals file: release the held row at
// File (the name it was ingested under) line Line, if the last four
// digits of its new account are Last4; By approves it.
type Approval struct {
	File  string
	Line  int
	Last4 string
	By    string
}

// ReleaseFunc applies one approval with the one release rule
// (jobs.Release). released is false when the rule refused it, note then
// says why; err is a failure of the ledger, which stops the file.
type ReleaseFunc func(ctx context.Context, a Approval) (released bool, note string, err error)

// ResultsTable is the layout of <approvals file>.results.csv: one row per
// line of the approvals file, with what became of it.
var ResultsTable = report.Table{Sheet: "approvals",
	Columns: report.Columns("line:int", "file", "row_line", "account_last4", "approved_by", "result", "reason")}

// approvalResult is one row of the results report.
type approvalResult struct {
	line                             int
	file, rowLine, last4, by, result string
	reason                           string
}

func (r approvalResult) Cells() []any {
	return []any{r.line, r.file, r.rowLine, r.last4, r.by, r.result, r.reason}
}

func (r approvalResult) Applied() bool { return r.result == "released" }

// Approvals is the approvals kind, each line released with release (the
// one release rule, jobs.ApprovalRelease). Nil release: every line is
// refused, saying so.
func Approvals(release ReleaseFunc) LineKind {
	return lineKind{
		report: LineReport{Table: ResultsTable, Dir: "approvals", Did: "approvals released their rows"},
		apply: func(ctx context.Context, _ payment.FileMeta, l Line) (LineResult, error) {
			return applyApproval(ctx, release, l)
		},
		check: func(l Line) string {
			_, _, why := readApproval(l)
			return why
		},
	}
}

// headerColumns maps each column of an applied kind's header, as
// compared (lower case, without underscores), to its index.
func headerColumns(header []string) map[string]int {
	col := map[string]int{}
	for i, cell := range header {
		k := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(cell)), "_", "")
		if _, dup := col[k]; !dup {
			col[k] = i
		}
	}
	return col
}

// readApproval reads one line of an approvals file and says what is
// wrong with its form, or "" (the ledger is not asked).
func readApproval(l Line) (approvalResult, int, string) {
	cell, line := l.Cell, l.Number
	last4 := cell("account_last4")
	if len(last4) > 4 {
		last4 = redact.Last4(last4) // never echo a full account number
	}
	r := approvalResult{line: line, file: cell("file"), rowLine: cell("line"), last4: last4, by: cell("approved_by"), result: "refused"}
	n, err := strconv.Atoi(r.rowLine)
	switch {
	case r.file == "":
		return r, n, "the file column is empty: give the payment file's name as it was ingested (as batchd status shows it)"
	case err != nil || n <= 0:
		return r, n, fmt.Sprintf("line %q is not a line number: give the held row's line, 2 or more", r.rowLine)
	case !fourDigits(cell("account_last4")):
		return r, n, fmt.Sprintf("account_last4 %q is not four digits: give the last four digits of the new account (format the column as Text so that leading zeros stay)", r.last4)
	case r.by == "":
		return r, n, "approved_by is empty: say who approves the change"
	}
	return r, n, ""
}

// applyApproval checks and applies one line of an approvals file.
func applyApproval(ctx context.Context, release ReleaseFunc, l Line) (approvalResult, error) {
	r, n, why := readApproval(l)
	switch {
	case why != "":
		r.reason = why
	case release == nil:
		r.reason = "this batchd does not release rows by approvals file: use batchd release"
	default:
		ok, note, err := release(ctx, Approval{File: r.file, Line: n, Last4: r.last4, By: r.by})
		if err != nil {
			return r, err
		}
		r.reason = note
		if ok {
			r.result = "released"
		}
	}
	return r, nil
}

// fourDigits reports whether s is exactly four ASCII digits.
func fourDigits(s string) bool {
	if len(s) != 4 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
