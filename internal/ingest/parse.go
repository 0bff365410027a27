package ingest

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/ingest/sheet"
	"github.com/batchd/batchd/internal/ingest/sourcefile"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// RejectsTable is the layout of <file>.rejects.csv (and .xlsx). severity
// is "error" (the row is refused) or "warning" (the row is accepted; see
// csvfile.Warning); cell is the spreadsheet cell ("B7") of a finding in an
// XLSX file, whose line is then the sheet's row, and empty for a CSV file.
// Both come last so that the first four columns keep their places.
var RejectsTable = report.Table{Sheet: "rejects", Columns: report.Columns(
	"line:int", "column", "value", "message", "severity", "cell",
)}

// RejectsColumns are the rejects report's column names.
var RejectsColumns = RejectsTable.Names()

// ParseOptions returns the parser options for a run at the job's clock,
// for every kind of file: RunDate also decides whether a funding-source
// file's micro-deposits rows are deprecated (funding.Deprecated).
func (j *Job) ParseOptions() csvfile.Options {
	return csvfile.Options{
		IgnoreColumns: j.opts.IgnoreColumns,
		Delimiter:     j.opts.Delimiter,
		RunDate:       csvfile.DateOf(j.opts.Now().In(j.opts.Location)),
		TestMode:      j.opts.TestMode,
		Logger:        j.log,
	}
}

// finding is a csvfile.Finding as the spool keeps it: exactly the cells of
// its rejects-report row.
type finding struct {
	Line                                   int
	Column, Value, Message, Severity, Cell string
}

// findingOf is f as the spool keeps it.
func findingOf(f csvfile.Finding) finding {
	return finding{f.Line, f.Column, f.Value, f.Message, f.Severity.String(), f.Cell}
}

func (f finding) cells() []any {
	return []any{f.Line, f.Column, f.Value, f.Message, f.Severity, f.Cell}
}

// parse streams the spooled file into loader and the findings into a
// spool file beside it, from which deliverRejects writes the rejects
// report in every format. It returns that file's path (to remove) and the
// parse summary. Neither file is ever held in memory whole. A payment
// file's rows go to loader.Add; a funding-source or verification file's
// (kind) to sources, the funding.Loader of the same batch
// (funding.Ledger.BeginSourceBatch).
func (j *Job) parse(ctx context.Context, local string, loader payment.Loader, sources funding.Loader, kind payment.BatchKind) (string, csvfile.Summary, error) {
	return j.parseFile(ctx, local, "", loader, sources, kind)
}

// parseFile is parse of the spooled file local, named name in the inbox:
// a CSV file, or an XLSX workbook (see OpenInput).
func (j *Job) parseFile(ctx context.Context, local, name string, loader payment.Loader, sources funding.Loader, kind payment.BatchKind) (string, csvfile.Summary, error) {
	in, err := OpenInput(local, name, j.sheetOptions())
	if err != nil {
		return "", csvfile.Summary{}, err // a *csvfile.FileError: the file is unreadable
	}
	defer in.Close()
	out, err := os.CreateTemp(j.opts.SpoolDir, ".rejects-*.gob")
	if err != nil {
		return "", csvfile.Summary{}, err
	}
	defer out.Close()
	w := bufio.NewWriter(out)
	enc := gob.NewEncoder(w)
	onFinding := func(f csvfile.Finding) error {
		return enc.Encode(findingOf(f))
	}
	var (
		sum  csvfile.Summary
		perr error
	)
	if kind.Payments() {
		rc := NewRoutingCheck(ctx, j.opts.Routing, onFinding, func(err error) {
			j.log.Warn("routing numbers not checked: the bank directory could not be asked; the file goes on unchecked",
				"file", name, "error", err)
		})
		sum, perr = in.Payments(j.ParseOptions(), func(p csvfile.Payment) error {
			if ok, err := rc.Pass(p); !ok || err != nil {
				return err
			}
			return loader.Add(p.Line, p.Payment)
		}, onFinding)
		sum = rc.Adjust(sum)
	} else if sources == nil {
		perr = fmt.Errorf("load the rows of a %s batch: no funding loader (begin it with BeginSourceBatch)", kind)
	} else {
		sum, perr = in.Sources(kind, j.ParseOptions(),
			func(r sourcefile.Row) error { return sources.AddSource(r.Line, r.Request) }, onFinding)
	}
	if err := w.Flush(); err != nil && perr == nil {
		perr = fmt.Errorf("write rejects report: %w", err)
	}
	return out.Name(), sum, perr
}

// detect tells the kind of the spooled file local, named name in the
// inbox, by its header row (sourcefile.Detect), a CSV file's or an XLSX
// sheet's: a file whose header cannot be read is a payment file, which
// the payment parser then explains.
func (j *Job) detect(local, name string) (payment.BatchKind, error) {
	if k, pinned, err := j.pinned(name); pinned || err != nil {
		return k, err
	}
	in, err := OpenInput(local, name, j.sheetOptions())
	var fe *csvfile.FileError
	if errors.As(err, &fe) {
		return payment.KindPayments, nil
	}
	if err != nil {
		return payment.KindPayments, err
	}
	defer in.Close()
	return in.Kind(j.ParseOptions())
}

// sheetOptions choose and bound the sheet of an XLSX file
// (ingest.sheet, ingest.max_file_bytes).
func (j *Job) sheetOptions() sheet.Options {
	return sheet.Options{Sheet: j.opts.Sheet, MaxBytes: j.opts.MaxFileBytes}
}

// WriteFinding writes one finding as a rejects-report CSV row, as the
// rejects report shows it. Values are already masked by the parser where
// sensitive.
func WriteFinding(w *report.Writer, f csvfile.Finding) error {
	rec, err := RejectsTable.CSVRecord(findingOf(f).cells()...)
	if err != nil {
		return err
	}
	return w.Write(rec...)
}

// writeRejects writes the rejects report at path (the CSV's) in every
// configured format from the findings parse spooled.
func (j *Job) writeRejects(spool, path string) ([]string, error) {
	return RejectsTable.Write(path, j.opts.ReportFormats, func(r *report.Rows) error {
		in, err := os.Open(spool)
		if err != nil {
			return err
		}
		defer in.Close()
		dec := gob.NewDecoder(bufio.NewReader(in))
		for {
			var f finding
			if err := dec.Decode(&f); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return fmt.Errorf("read findings: %w", err)
			}
			if err := r.Add(f.cells()...); err != nil {
				return err
			}
		}
	})
}

// pinned is the kind ingest.kinds pins name to, if a pattern names it. A
// name that patterns of two kinds match is refused: batchd does not guess
// which the administrator meant.
func (j *Job) pinned(name string) (payment.BatchKind, bool, error) {
	var found []string
	var kind payment.BatchKind
	for pat, k := range j.opts.Kinds {
		if ok, _ := path.Match(pat, name); ok && (len(found) == 0 || k != kind) {
			found, kind = append(found, pat+": "+k.String()), k
		}
	}
	switch len(found) {
	case 0:
		return "", false, nil
	case 1:
		return kind, true, nil
	}
	slices.Sort(found)
	return "", true, fmt.Errorf("ingest.kinds pins %s to two kinds (%s): make the patterns name it once", name, strings.Join(found, "; "))
}
