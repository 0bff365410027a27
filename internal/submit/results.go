package submit

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
	"github.com/batchd/batchd/internal/report"
)

// ResultsColumns are the columns of <file>.results.csv, the finance team's
// receipt for one file: the eight first, then name and the masked
// account so a person can tell rows apart without opening the input.
var ResultsColumns = []string{"line", "check_id", "number", "label", "amount", "status", "risk", "fund_confirmation", "error", "name", "account"}

// ResultsName is the report's name for an input file name.
func ResultsName(file string) string { return file + ".results.csv" }

// WriteResults writes one batch's results report.
func WriteResults(db payment.RowReader, batchID uint64, w *report.Writer) error {
	if err := w.Write(ResultsColumns...); err != nil {
		return err
	}
	return db.Rows(batchID, func(row *payment.Row) (bool, error) {
		status := string(row.CheckStatus)
		if row.State != payment.Submitted {
			status = string(row.State)
		}
		acct := row.Payment.AccountLast4
		if row.Payment.BankAccount != "" {
			acct = redact.Last4(row.Payment.BankAccount)
		}
		if acct != "" {
			acct = "****" + acct
		}
		err := w.Write(strconv.Itoa(int(row.Key.Line)), row.CheckID, row.Number, row.Label,
			row.Payment.Amount.String(), status, row.Risk, row.FundConfirmation, row.Error,
			row.Payment.Name, acct)
		return err == nil, err
	})
}

// DeliverResults writes the results report of every batch whose rows all
// have a check or a rejection and whose report has not been delivered:
// locally under dir, then to out. A batch is stamped only
// after delivery, so a failed upload is retried by the next run. It
// returns the names delivered.
func DeliverResults(ctx context.Context, db payment.Rows, dir string, out report.Destination) ([]string, error) {
	batches, err := db.Batches()
	if err != nil {
		return nil, err
	}
	var done []string
	for _, b := range batches {
		if b.Status != payment.BatchReady || b.OpenRows() > 0 || !b.ResultsReported.IsZero() {
			continue
		}
		name := ResultsName(b.File)
		local := filepath.Join(dir, fmt.Sprintf("batch-%06d-%s", b.ID, safeName(name)))
		if err := report.WriteFile(local, func(w *report.Writer) error { return WriteResults(db, b.ID, w) }); err != nil {
			return done, fmt.Errorf("results of batch %d (%s): %w", b.ID, b.File, err)
		}
		if err := out.Deliver(ctx, local, name); err != nil {
			return done, fmt.Errorf("results of batch %d (%s): %w", b.ID, b.File, err)
		}
		if err := db.ResultsReported(b.ID); err != nil {
			return done, err
		}
		done = append(done, name)
	}
	return done, nil
}

// safeName keeps a remote file name from escaping the local directory.
func safeName(name string) string {
	return strings.NewReplacer("/", "_", "\\", "_", "..", "_").Replace(name)
}
