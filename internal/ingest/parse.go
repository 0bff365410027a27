package ingest

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// RejectsColumns are the columns of <file>.rejects.csv. severity is "error"
// (the row is refused) or "warning" (the row is accepted; see
// csvfile.Warning); it comes last so that the first four columns keep their
// places.
var RejectsColumns = []string{"line", "column", "value", "message", "severity"}

// ParseOptions returns the parser options for a run at the job's clock.
func (j *Job) ParseOptions() csvfile.Options {
	return csvfile.Options{
		IgnoreColumns: j.opts.IgnoreColumns,
		Delimiter:     j.opts.Delimiter,
		RunDate:       csvfile.DateOf(j.opts.Now().In(j.opts.Location)),
		TestMode:      j.opts.TestMode,
		Logger:        j.log,
	}
}

// parse streams the spooled file into loader and the findings into a
// rejects report in the spool. It returns the report's path (to remove)
// and the parse summary. The file is never held in memory whole.
func (j *Job) parse(local string, loader payment.Loader) (string, csvfile.Summary, error) {
	in, err := os.Open(local)
	if err != nil {
		return "", csvfile.Summary{}, err
	}
	defer in.Close()
	out, err := os.CreateTemp(j.opts.SpoolDir, ".rejects-*.csv")
	if err != nil {
		return "", csvfile.Summary{}, err
	}
	defer out.Close()
	w := report.NewWriter(out)
	if err := w.Write(RejectsColumns...); err != nil {
		return out.Name(), csvfile.Summary{}, err
	}
	sum, perr := csvfile.Parse(in, j.ParseOptions(),
		func(p csvfile.Payment) error { return loader.Add(p.Line, p.Payment) },
		func(f csvfile.Finding) error { return WriteFinding(w, f) })
	if err := w.Flush(); err != nil && perr == nil {
		perr = fmt.Errorf("write rejects report: %w", err)
	}
	return out.Name(), sum, perr
}

// WriteFinding writes one finding as a rejects-report row. Values are
// already masked by the parser where sensitive.
func WriteFinding(w *report.Writer, f csvfile.Finding) error {
	return w.Write(strconv.Itoa(f.Line), f.Column, f.Value, f.Message, f.Severity.String())
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o640)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
