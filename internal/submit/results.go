package submit

import (
	"context"

	"github.com/batchd/batchd/internal/bankinfo"
	"github.com/batchd/batchd/internal/payee"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/rowrun"
)

// ResultsTable is the layout of <file>.results.csv (and .xlsx), the
// finance team's receipt for one file: the eight columns first,
// then name and the masked account so a person can tell rows apart without
// opening the input.
var ResultsTable = report.Table{Sheet: "results", Columns: report.Columns(
	"line:int", "check_id", "number", "label", "amount:money", "status",
	"risk", "fund_confirmation", "error", "name", "account",
	// account_change is a payee's bank-account change found at ingest,
	// masked ("…1234 → …5678"), and what became of it (README "Payee
	// bank-detail changes"); empty for every other row.
	"account_change",
	// bank is the payee's bank's name, as the service's bank directory
	// gave it at ingest (internal/bankinfo); empty when it was not asked.
	"bank",
)}

// ResultsColumns are the results report's column names.
var ResultsColumns = ResultsTable.Names()

// ResultsName is the report's name for an input file name: the CSV's;
// report.PathAs gives the other formats'.
func ResultsName(file string) string { return rowrun.ResultsName(file) }

// ResultsReader is what a results report is read from: the rows, and the
// payee marks that tell an account change.
type ResultsReader interface {
	payment.RowReader
	payment.BankLedger
	PayeeMarks(batch uint64) (map[uint32]payment.PayeeMark, error)
}

// WriteResults writes one batch's results report.
func WriteResults(db ResultsReader, batchID uint64, r *report.Rows) error {
	marks, err := db.PayeeMarks(batchID)
	if err != nil {
		return err
	}
	banks := bankinfo.NewNames(db)
	return db.Rows(batchID, func(row *payment.Row) (bool, error) {
		m := marks[row.Key.Line]
		bank, err := banks.Name(row.Payment.BankRouting)
		if err != nil {
			return false, err
		}
		err = r.Add(row.Key.Line, row.CheckID, row.Number, row.Label,
			row.Payment.Amount, row.ReportStatus(), row.Risk, row.FundConfirmation, row.Error,
			row.Payment.Name, redact.PaymentAccount(&row.Payment), AccountChange(row, &m), bank)
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
	rowrun.Stamper
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
	return rowrun.DeliverDue(ctx, db, rowrun.Receipt{Table: ResultsTable,
		Due: func(b *payment.Batch) (bool, error) {
			return b.Kind.Payments() && b.Status == payment.BatchReady && b.Busy() == 0 && b.ResultsReported.IsZero(), nil
		},
		Fill: func(batch uint64, r *report.Rows) error { return WriteResults(db, batch, r) },
	}, dir, out, formats)
}
