package rowrun

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// Results delivery is the same for every kind: a batch's receipt is
// written in the kind's table, locally then to the outbox, named after the
// archived file, and stamped only once every copy is delivered. A kind
// says which of its batches are due and how its rows fill the table.

// ResultsName is the report's name for an input file name: the CSV's;
// report.PathAs gives the other formats'.
func ResultsName(file string) string { return file + ".results.csv" }

// Stamper records that a batch's results report was delivered
// (payment.RowWriter.ResultsReported), and reads the batch's file record,
// which names the report (payment.OutboxName); every ledger has both.
type Stamper interface {
	payment.FileReader
	ResultsReported(batch uint64) error
}

// BatchStamper is what DeliverDue reads the batches from and stamps them
// in.
type BatchStamper interface {
	Stamper
	Batches() ([]payment.Batch, error)
}

// Receipt is one kind's results report: its layout, which batches are
// due (ready, not yet delivered) and how a batch's rows fill the table.
type Receipt struct {
	Table report.Table
	Due   func(b *payment.Batch) (bool, error)
	Fill  func(batch uint64, r *report.Rows) error
}

// DeliverDue delivers the receipt of every batch rc says is due, through
// DeliverBatch, in each of formats (none: CSV alone). A failed upload does
// not stop the other batches' reports being written locally (Delivered).
// It returns, for each batch delivered, the names of its copies.
func DeliverDue(ctx context.Context, led BatchStamper, rc Receipt, dir string, out report.Destination, formats []report.Format) ([]string, error) {
	batches, err := led.Batches()
	if err != nil {
		return nil, err
	}
	var d Delivered
	for _, b := range batches {
		due, err := rc.Due(&b)
		if err != nil {
			return d.Names, errors.Join(d.Err(), fmt.Errorf("results of batch %d (%s): %w", b.ID, b.File, err))
		}
		if !due {
			continue
		}
		if err := d.Add(DeliverBatch(ctx, led, &b, dir, out, formats, rc.Table,
			func(r *report.Rows) error { return rc.Fill(b.ID, r) })); err != nil {
			return d.Names, err
		}
	}
	return d.Names, d.Err()
}

// Delivered collects what DeliverBatch did for each batch of one run. A
// batch whose report was written but not uploaded (payment.ErrRemote: the
// SFTP server down) does not stop the run: every due report is then
// written locally, each batch stays unstamped for the next run to
// deliver, and the run ends with the first such error (the others are
// the same outage). Any other error stops it.
type Delivered struct {
	Names  []string // for each batch delivered, the names of its copies
	remote error
}

// Add records one batch's delivery, and returns the error that must stop
// the run, if any.
func (d *Delivered) Add(names string, err error) error {
	switch {
	case err == nil:
		d.Names = append(d.Names, names)
		return nil
	case errors.Is(err, payment.ErrRemote):
		if d.remote == nil {
			d.remote = err
		}
		return nil
	}
	return errors.Join(d.remote, err)
}

// Err is the run's delivery error: the first upload that failed.
func (d *Delivered) Err() error { return d.remote }

// DeliverBatch is the one way a batch's results report is made, for
// payment and funding batches alike: written in table's layout by fill,
// in each of formats, locally under dir, then delivered to out, named
// after the archived file (payroll-1.csv.results.csv, so that no receipt
// replaces another file's: payment.OutboxName), and only then stamped, so
// that a failed upload is retried by the next run. It returns the names of
// the copies ("payroll.csv.results.csv, payroll.csv.results.xlsx").
func DeliverBatch(ctx context.Context, led Stamper, b *payment.Batch, dir string, out report.Destination,
	formats []report.Format, table report.Table, fill func(*report.Rows) error) (string, error) {
	base, err := payment.OutboxName(led, b)
	if err != nil {
		return "", err
	}
	name := ResultsName(base)
	local := filepath.Join(dir, fmt.Sprintf("batch-%06d-%s", b.ID, safeName(name)))
	paths, err := table.Write(local, formats, fill)
	if err != nil {
		return "", fmt.Errorf("results of batch %d (%s): %w", b.ID, b.File, err)
	}
	if err := out.DeliverAll(ctx, paths, name); err != nil {
		return "", fmt.Errorf("results of batch %d (%s): %w", b.ID, b.File, err)
	}
	if err := led.ResultsReported(b.ID); err != nil {
		return "", err
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = report.PathAs(name, report.Format(strings.TrimPrefix(filepath.Ext(p), ".")))
	}
	return strings.Join(names, ", "), nil
}

// safeName keeps a remote file name from escaping the local directory.
func safeName(name string) string {
	return strings.NewReplacer("/", "_", "\\", "_", "..", "_").Replace(name)
}
