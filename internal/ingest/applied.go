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

// LineKind is a kind whose lines ingest applies itself (a registered
// applied kind, Options.Lines): it reads, checks and applies one line at a
// time, and words its results report. Implementations: Approvals, Cancels
// and Edits here; internal/paymentlink for payment links.
type LineKind interface {
	// Report is the kind's results report.
	Report() LineReport
	// Apply checks line l of the file meta and applies it. A line
	// refused (bad form, or refused by the rule) is a result; err is a
	// failure that left the line undone (the ledger, or a service that
	// did not answer), which stops the file.
	Apply(ctx context.Context, meta payment.FileMeta, l Line) (LineResult, error)
	// Check says what is wrong with a line's form, or "", asking neither
	// the ledger nor the service: batchd validate's part of Apply.
	Check(l Line) string
}

// LineReport is how an applied kind's results report is written.
type LineReport struct {
	Table report.Table
	Dir   string // the folder of ReportsDir that keeps local copies
	Did   string // the outcome in words: "approvals released their rows"
}

// LineResult is what became of one line: its results-report row.
type LineResult interface {
	Cells() []any  // the row, in the kind's table's column order
	Applied() bool // the line did what it asked
}

// Line is one line of an applied file, its cells read by the header's
// column names.
type Line struct {
	Number int // the line in the file
	rec    []string
	col    map[string]int
}

// NewLine is line number of a file whose header is header, with cells rec.
func NewLine(number int, header, rec []string) Line {
	return Line{Number: number, rec: rec, col: headerColumns(header)}
}

// Cell is the cell of column name (compared as headerColumns keys it),
// trimmed; "" when the header has no such column.
func (l Line) Cell(name string) string { return cellOf(l.rec, l.col, name) }

// lineKind is a LineKind of this package, its parts as funcs.
type lineKind struct {
	report LineReport
	apply  func(ctx context.Context, meta payment.FileMeta, l Line) (LineResult, error)
	check  func(l Line) string
}

func (k lineKind) Report() LineReport  { return k.report }
func (k lineKind) Check(l Line) string { return k.check(l) }
func (k lineKind) Apply(ctx context.Context, meta payment.FileMeta, l Line) (LineResult, error) {
	return k.apply(ctx, meta, l)
}

// applyFile takes a claimed file of an applied kind through fence, lines,
// results report, commit and archive.
func (j *Job) applyFile(ctx context.Context, rem Remote, o Outcome, h *held, local string, meta payment.FileMeta) (Outcome, error) {
	o.Kind = meta.Kind
	kind, ok := j.opts.Lines[meta.Kind]
	if !ok {
		return j.errored(o, fmt.Errorf("%s is %s, which this batchd cannot apply: no such kind is registered", h.name, meta.Kind.Word()))
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
		if r.Applied() {
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
	o.Detail = fmt.Sprintf("%d of %d %s; see %s", done, len(results), kind.Report().Did, path.Join(j.opts.Outbox, resultsName(name)))
	j.log.Info(meta.Kind.String()+" file applied", "file", o.File, "batch", o.Batch, "applied", done, "not_applied", len(results)-done, "moved_to", to)
	return o, nil
}

// applyLines reads the file local and applies each line with kind's
// rule, returning what became of each.
func (j *Job) applyLines(ctx context.Context, kind LineKind, local string, meta payment.FileMeta) ([]LineResult, error) {
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
	var out []LineResult
	err = eachLine(src, func(l Line) error {
		r, err := kind.Apply(ctx, meta, l)
		if err != nil {
			return fmt.Errorf("line %d: %w", l.Number, err)
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// eachLine calls fn with each line of src after the header.
func eachLine(src csvfile.Source, fn func(Line) error) error {
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
		if err := fn(Line{Number: line, rec: rec, col: col}); err != nil {
			return err
		}
	}
}

// Applied checks the form of every line of a file of an applied kind, as
// ingest will before it applies them, calling onFinding with each line's
// problem; what the ledger and the service will say of a line is known
// only when ingest applies it (batchd validate).
func (in *Input) Applied(kind LineKind, opts csvfile.Options, onFinding func(csvfile.Finding) error) (csvfile.Summary, error) {
	var sum csvfile.Summary
	src, err := in.Records(opts)
	if err != nil {
		return sum, err
	}
	err = eachLine(src, func(l Line) error {
		sum.Rows++
		why := kind.Check(l)
		if why == "" {
			sum.Valid++
			return nil
		}
		sum.Invalid++
		return onFinding(csvfile.Finding{Line: l.Number, Message: why, Severity: csvfile.Error})
	})
	return sum, err
}

// deliverResults writes the results report of the file archived as name
// in every configured format to a kept local copy and uploads it to the
// outbox as name.results.csv (and .xlsx).
func (j *Job) deliverResults(ctx context.Context, rem Remote, kind LineKind, results []LineResult, name string, batch uint64) error {
	rname := resultsName(name)
	rep := kind.Report()
	keep := filepath.Join(j.opts.ReportsDir, rep.Dir, fmt.Sprintf("batch-%06d-%s", batch, strings.ReplaceAll(rname, "/", "_")))
	kept, err := rep.Table.Write(keep, j.opts.ReportFormats, func(rows *report.Rows) error {
		for _, r := range results {
			if err := rows.Add(r.Cells()...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("keep %s results report: %w", rep.Dir, err)
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
