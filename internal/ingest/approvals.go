package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
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
var ResultsTable = report.Table{Sheet: "approvals", Columns: []report.Column{
	{Name: "line", Kind: report.Int},
	{Name: "file", Kind: report.Text},
	{Name: "row_line", Kind: report.Text},
	{Name: "account_last4", Kind: report.Text},
	{Name: "approved_by", Kind: report.Text},
	{Name: "result", Kind: report.Text},
	{Name: "reason", Kind: report.Text},
}}

// approvalResult is one row of the results report.
type approvalResult struct {
	line                             int
	file, rowLine, last4, by, result string
	reason                           string
}

// approve takes a claimed approvals file through fence, releases, results
// report, commit and archive. The file is recorded as a batch of its kind
// with no rows, so that the same content dropped again is a duplicate.
// Lines are applied once the fence is passed; a line refused releases
// nothing, and the file is archived whatever its lines' results, which
// its results report gives line by line.
func (j *Job) approve(ctx context.Context, rem Remote, o Outcome, h *held, local string, meta payment.FileMeta) (Outcome, error) {
	o.Kind = meta.Kind
	loader, err := j.db.BeginBatch(meta)
	if err != nil {
		return j.errored(o, err)
	}
	o.Batch = loader.Batch().ID
	if err := j.fenceOrAbort(ctx, rem, h, loader); err != nil {
		return j.errored(o, err)
	}
	dir := j.dayDir()
	name, err := j.chooseName(ctx, rem, dir, h.name, "", o.Batch, true)
	if err != nil {
		return j.errored(o, abortWith(loader, fmt.Errorf("name %s in %s: %w", h.name, dir, err)))
	}
	results, err := j.applyApprovals(ctx, local, h.name)
	if err != nil {
		return j.errored(o, abortWith(loader, err))
	}
	released := 0
	for _, r := range results {
		if r.result == "released" {
			released++
		}
	}
	if err := j.deliverResults(ctx, rem, results, name, o.Batch); err != nil {
		return j.errored(o, abortWith(loader, err))
	}
	o.Rows, o.Valid, o.Rejected = len(results), released, len(results)-released
	if _, err := loader.Commit(len(results), len(results)-released); err != nil {
		return j.errored(o, err)
	}
	to, err := j.moveTo(ctx, rem, h, dir, name, meta.SHA256, o.Batch, true)
	if err != nil {
		return j.errored(o, fmt.Errorf("archive %s: %w", h.path, err))
	}
	o.Outcome, o.MovedTo = Accepted, to
	o.Detail = fmt.Sprintf("%d of %d approvals released their rows; see %s", released, len(results), path.Join(j.opts.Outbox, resultsName(name)))
	j.log.Info("approvals file applied", "file", o.File, "batch", o.Batch, "released", released, "refused", len(results)-released, "moved_to", to)
	return o, nil
}

// applyApprovals reads the approvals file local (named name) and applies
// each line, returning what became of each.
func (j *Job) applyApprovals(ctx context.Context, local, name string) ([]approvalResult, error) {
	in, err := OpenInput(local, name, j.sheetOptions())
	if err != nil {
		return nil, fmt.Errorf("read approvals file %s: %w", name, err)
	}
	defer in.Close()
	src, err := in.Records(j.ParseOptions())
	if err != nil {
		return nil, fmt.Errorf("read approvals file %s: %w", name, err)
	}
	header, _, err := src.Header()
	if err != nil {
		return nil, fmt.Errorf("read approvals file %s: %w", name, err)
	}
	col := approvalColumns(header)
	var out []approvalResult
	for {
		rec, line, err := src.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read approvals file %s: %w", name, err)
		}
		r, err := j.applyApproval(ctx, line, rec, col)
		if err != nil {
			return nil, fmt.Errorf("approvals file %s line %d: %w", name, line, err)
		}
		out = append(out, r)
	}
}

// approvalColumns maps each approvals column to its index in header.
func approvalColumns(header []string) map[string]int {
	col := map[string]int{}
	for i, cell := range header {
		k := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(cell)), "_", "")
		if _, dup := col[k]; !dup {
			col[k] = i
		}
	}
	return col
}

// applyApproval checks and applies one line of an approvals file.
func (j *Job) applyApproval(ctx context.Context, line int, rec []string, col map[string]int) (approvalResult, error) {
	cell := func(name string) string {
		i, ok := col[strings.ReplaceAll(name, "_", "")]
		if !ok || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	last4 := cell("account_last4")
	if len(last4) > 4 {
		last4 = redact.Last4(last4) // never echo a full account number
	}
	r := approvalResult{line: line, file: cell("file"), rowLine: cell("line"), last4: last4, by: cell("approved_by"), result: "refused"}
	n, err := strconv.Atoi(r.rowLine)
	switch {
	case r.file == "":
		r.reason = "the file column is empty: give the payment file's name as it was ingested (as batchd status shows it)"
	case err != nil || n <= 0:
		r.reason = fmt.Sprintf("line %q is not a line number: give the held row's line, 2 or more", r.rowLine)
	case !fourDigits(cell("account_last4")):
		r.reason = fmt.Sprintf("account_last4 %q is not four digits: give the last four digits of the new account (format the column as Text so that leading zeros stay)", r.last4)
	case r.by == "":
		r.reason = "approved_by is empty: say who approves the change"
	case j.opts.Release == nil:
		r.reason = "this batchd does not release rows by approvals file: use batchd release"
	default:
		ok, note, err := j.opts.Release(ctx, Approval{File: r.file, Line: n, Last4: r.last4, By: r.by})
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

// deliverResults writes the results report of the approvals file archived
// as name in every configured format to a kept local copy and uploads it
// to the outbox as name.results.csv (and .xlsx).
func (j *Job) deliverResults(ctx context.Context, rem Remote, results []approvalResult, name string, batch uint64) error {
	rname := resultsName(name)
	keep := filepath.Join(j.opts.ReportsDir, "approvals", fmt.Sprintf("batch-%06d-%s", batch, strings.ReplaceAll(rname, "/", "_")))
	kept, err := ResultsTable.Write(keep, j.opts.ReportFormats, func(rows *report.Rows) error {
		for _, r := range results {
			if err := rows.Add(r.line, r.file, r.rowLine, r.last4, r.by, r.result, r.reason); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("keep approvals results report: %w", err)
	}
	return report.Destination{Outbox: rem, Dir: j.opts.Outbox}.DeliverAll(ctx, kept, rname)
}

func resultsName(file string) string { return file + ".results.csv" }
