package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// Kinds whose lines ingest applies itself (payment.KindInfo.Applied):
// approvals release held rows, cancels void checks, edits correct them.
// Such a file is recorded as a batch of its kind with no rows, so that
// the same content dropped again is a duplicate; its lines are applied
// once the fence is passed, in order; a line refused changes nothing; and
// the file is archived whatever its lines' results, which its results
// report (<name>.results.csv) gives line by line. A failure that leaves a
// line undone (the ledger, or a service that did not answer) stops the
// file before its report: the file stays claimed, and the next run
// applies it again from the start, each kind's rule making a line applied
// before a no-op (a released row is no longer held; a cancel or edit
// line's intent is in the ledger).

// lineResult is what became of one line: its results-report row.
type lineResult interface {
	cells() []any  // the row, in the kind's table's column order
	applied() bool // the line did what it asked
}

// appliedKind is one applied kind as ingest applies it.
type appliedKind struct {
	table   report.Table
	reports string // the folder of ReportsDir that keeps local copies
	did     string // "approvals released their rows": the outcome's words
	apply   func(j *Job, ctx context.Context, meta payment.FileMeta, line int, rec []string, col map[string]int) (lineResult, error)
	// check says what is wrong with a line's form, or "", asking neither
	// the ledger nor the service: batchd validate's part of apply.
	check func(line int, rec []string, col map[string]int) string
}

// appliedKinds are the applied kinds ingest knows, by kind.
var appliedKinds = map[payment.BatchKind]appliedKind{
	payment.KindApprovals: approvals,
	payment.KindCancels:   cancels,
	payment.KindLinks:     links,
	payment.KindEdits:     edits,
}

// applyFile takes a claimed file of an applied kind through fence, lines,
// results report, commit and archive.
func (j *Job) applyFile(ctx context.Context, rem Remote, o Outcome, h *held, local string, meta payment.FileMeta) (Outcome, error) {
	o.Kind = meta.Kind
	kind, ok := appliedKinds[meta.Kind]
	if !ok {
		return j.errored(o, fmt.Errorf("%s is %s, which ingest cannot apply", h.name, meta.Kind.Word()))
	}
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
	results, err := j.applyLines(ctx, kind, local, meta)
	if err != nil {
		return j.errored(o, abortWith(loader, err))
	}
	done := 0
	for _, r := range results {
		if r.applied() {
			done++
		}
	}
	if err := j.deliverResults(ctx, rem, kind, results, name, o.Batch); err != nil {
		return j.errored(o, abortWith(loader, err))
	}
	o.Rows, o.Valid, o.Rejected = len(results), done, len(results)-done
	if _, err := loader.Commit(len(results), len(results)-done); err != nil {
		return j.errored(o, err)
	}
	to, err := j.moveTo(ctx, rem, h, dir, name, meta.SHA256, o.Batch, true)
	if err != nil {
		return j.errored(o, fmt.Errorf("archive %s: %w", h.path, err))
	}
	o.Outcome, o.MovedTo = Accepted, to
	o.Detail = fmt.Sprintf("%d of %d %s; see %s", done, len(results), kind.did, path.Join(j.opts.Outbox, resultsName(name)))
	j.log.Info(meta.Kind.String()+" file applied", "file", o.File, "batch", o.Batch, "applied", done, "not_applied", len(results)-done, "moved_to", to)
	return o, nil
}

// applyLines reads the file local and applies each line with kind's
// rule, returning what became of each.
func (j *Job) applyLines(ctx context.Context, kind appliedKind, local string, meta payment.FileMeta) ([]lineResult, error) {
	what := meta.Kind.String() + " file " + meta.Name
	in, err := OpenInput(local, meta.Name, j.sheetOptions())
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	defer in.Close()
	src, err := in.Records(j.ParseOptions())
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	var out []lineResult
	err = eachLine(src, func(line int, rec []string, col map[string]int) error {
		r, err := kind.apply(j, ctx, meta, line, rec, col)
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// eachLine calls fn with each record of src after the header, and the
// header's columns (headerColumns).
func eachLine(src csvfile.Source, fn func(line int, rec []string, col map[string]int) error) error {
	header, _, err := src.Header()
	if err != nil {
		return err
	}
	col := headerColumns(header)
	for {
		rec, line, err := src.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(line, rec, col); err != nil {
			return err
		}
	}
}

// Applied checks the form of every line of a file of an applied kind, as
// ingest will before it applies them, calling onFinding with each line's
// problem; what the ledger and the service will say of a line is known
// only when ingest applies it (batchd validate).
func (in *Input) Applied(kind payment.BatchKind, opts csvfile.Options, onFinding func(csvfile.Finding) error) (csvfile.Summary, error) {
	var sum csvfile.Summary
	ak, ok := appliedKinds[kind]
	if !ok {
		return sum, fmt.Errorf("%s is not a kind ingest applies", kind.Word())
	}
	src, err := in.Records(opts)
	if err != nil {
		return sum, err
	}
	err = eachLine(src, func(line int, rec []string, col map[string]int) error {
		sum.Rows++
		why := ak.check(line, rec, col)
		if why == "" {
			sum.Valid++
			return nil
		}
		sum.Invalid++
		return onFinding(csvfile.Finding{Line: line, Message: why, Severity: csvfile.Error})
	})
	return sum, err
}

// deliverResults writes the results report of the file archived as name
// in every configured format to a kept local copy and uploads it to the
// outbox as name.results.csv (and .xlsx).
func (j *Job) deliverResults(ctx context.Context, rem Remote, kind appliedKind, results []lineResult, name string, batch uint64) error {
	rname := resultsName(name)
	keep := filepath.Join(j.opts.ReportsDir, kind.reports, fmt.Sprintf("batch-%06d-%s", batch, strings.ReplaceAll(rname, "/", "_")))
	kept, err := kind.table.Write(keep, j.opts.ReportFormats, func(rows *report.Rows) error {
		for _, r := range results {
			if err := rows.Add(r.cells()...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("keep %s results report: %w", kind.reports, err)
	}
	return report.Destination{Outbox: rem, Dir: j.opts.Outbox}.DeliverAll(ctx, kept, rname)
}

func resultsName(file string) string { return file + ".results.csv" }

// cellOf reads the cell of column name (compared as headerColumns keys
// it) from rec, trimmed; "" when the header has no such column.
func cellOf(rec []string, col map[string]int, name string) string {
	i, ok := col[strings.ReplaceAll(name, "_", "")]
	if !ok || i >= len(rec) {
		return ""
	}
	return strings.TrimSpace(rec[i])
}
