package submit

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/batchd/batchd/internal/payee"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
	"github.com/batchd/batchd/internal/report"
)

// ResultsTable is the layout of <file>.results.csv (and .xlsx), the
// finance team's receipt for one file: the eight columns first,
// then name and the masked account so a person can tell rows apart without
// opening the input.
var ResultsTable = report.Table{Sheet: "results", Columns: []report.Column{
	{Name: "line", Kind: report.Int},
	{Name: "check_id", Kind: report.Text},
	{Name: "number", Kind: report.Text},
	{Name: "label", Kind: report.Text},
	{Name: "amount", Kind: report.Money},
	{Name: "status", Kind: report.Text},
	{Name: "risk", Kind: report.Text},
	{Name: "fund_confirmation", Kind: report.Text},
	{Name: "error", Kind: report.Text},
	{Name: "name", Kind: report.Text},
	{Name: "account", Kind: report.Text},
	// account_change is a payee's bank-account change found at ingest,
	// masked ("…1234 → …5678"), and what became of it (README "Payee
	// bank-detail changes"); empty for every other row.
	{Name: "account_change", Kind: report.Text},
}}

// ResultsColumns are the results report's column names.
var ResultsColumns = ResultsTable.Names()

// ResultsName is the report's name for an input file name: the CSV's;
// report.PathAs gives the other formats'.
func ResultsName(file string) string { return file + ".results.csv" }

// ResultsReader is what a results report is read from: the rows, and the
// payee marks that tell an account change.
type ResultsReader interface {
	payment.RowReader
	PayeeMarks(batch uint64) (map[uint32]payment.PayeeMark, error)
}

// WriteResults writes one batch's results report.
func WriteResults(db ResultsReader, batchID uint64, r *report.Rows) error {
	marks, err := db.PayeeMarks(batchID)
	if err != nil {
		return err
	}
	return db.Rows(batchID, func(row *payment.Row) (bool, error) {
		m := marks[row.Key.Line]
		err := r.Add(row.Key.Line, row.CheckID, row.Number, row.Label,
			row.Payment.Amount, row.ReportStatus(), row.Risk, row.FundConfirmation, row.Error,
			row.Payment.Name, redact.PaymentAccount(&row.Payment), AccountChange(row, &m))
		return err == nil, err
	})
}

// AccountChange is the results report's account_change cell of row:
// the change, masked, and what became of the row ("warned", "held",
// "released by …"); "" when there was none, or ingest.on_account_change
// was allow. One wording for the results and the exceptions reports.
func AccountChange(row *payment.Row, m *payment.PayeeMark) string {
	c := m.Change
	if c == nil || c.Action == payee.Allow {
		return ""
	}
	what := "warned"
	if c.Action == payee.Hold {
		what = "held"
		for _, s := range row.History {
			if s.Via == payment.Approve {
				what = s.Note // "released by …"
			}
		}
	}
	return c.Describe() + " (" + what + ")"
}

// ResultsLedger is what results are delivered from: the rows, their payee
// marks, and the stamp of a delivered report.
type ResultsLedger interface {
	ResultsReader
	Stamper
}

// DeliverResults writes the results report of every payment batch whose rows all
// have a check or a rejection, or are held (payment.Batch.Busy; a held row
// shows why and how to release it, and its release has the report written
// again), and whose report has not been delivered, in
// each of formats (none: CSV alone): locally under dir, then to out. A
// batch is stamped only after every copy is delivered, so a failed upload
// is retried by the next run; it does not stop the other batches' reports
// being written locally (Delivered). It returns, for each batch
// delivered, the names of its copies ("payroll.csv.results.csv,
// payroll.csv.results.xlsx").
func DeliverResults(ctx context.Context, db ResultsLedger, dir string, out report.Destination, formats []report.Format) ([]string, error) {
	batches, err := db.Batches()
	if err != nil {
		return nil, err
	}
	var d Delivered
	for _, b := range batches {
		if !b.Kind.Payments() || b.Status != payment.BatchReady || b.Busy() > 0 || !b.ResultsReported.IsZero() {
			continue
		}
		if err := d.Add(DeliverBatch(ctx, db, &b, dir, out, formats, ResultsTable,
			func(r *report.Rows) error { return WriteResults(db, b.ID, r) })); err != nil {
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

// Stamper records that a batch's results report was delivered
// (payment.RowWriter.ResultsReported), and reads the batch's file record,
// which names the report (payment.OutboxName); every ledger has both.
type Stamper interface {
	payment.FileReader
	ResultsReported(batch uint64) error
}

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
