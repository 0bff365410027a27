package onboard

import (
	"context"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/rowrun"
)

// ResultsTable is the layout of a funding-source or verification file's
// <file>.results.csv (and .xlsx): what became of each row, then what to do
// next and the masked account, so that a person can tell rows apart
// without opening the input. A processor token is a credential and never
// appears.
var ResultsTable = report.Table{Sheet: "results", Columns: report.Columns(
	"line:int", "user_id", "funding_source_id", "status", "bank_name", "last_four",
	"error", "method", "next_step", "account",
)}

// ResultsLedger is what DeliverResults needs of the ledger; internal/state's
// ledger has it all.
type ResultsLedger interface {
	Batches() ([]payment.Batch, error)
	SourceRows(batch uint64, fn func(*funding.Row) (bool, error)) error
	ResultsReported(batch uint64) error
	// File names the batch's report after its archived file
	// (payment.OutboxName).
	File(sha256 string) (*payment.File, error)
}

// WriteResults writes one batch's results rows, in line order.
func WriteResults(led ResultsLedger, batchID uint64, r *report.Rows) error {
	return led.SourceRows(batchID, func(row *funding.Row) (bool, error) {
		err := r.Add(ResultCells(row)...)
		return err == nil, err
	})
}

// ResultCells are a row's cells in ResultsTable's order: the one wording
// of a funding row for a report, which the archive of a pruned batch
// reuses.
func ResultCells(row *funding.Row) []any {
	return []any{row.Key.Line, userOf(row), row.SourceID, row.ReportStatus(), row.BankName,
		lastFour(row), row.Error, string(row.Request.Method), NextStep(row), account(row)}
}

// NextStep is what a row still needs, as the reports say it: the step
// recorded on the row, or the one its state implies (a micro-deposit row
// whose deposits are on their way needs its verification file).
func NextStep(row *funding.Row) string {
	switch {
	case row.NextStep != "":
		return row.NextStep
	case row.State == payment.Submitted && row.Request.Method == funding.MicroDeposits &&
		row.Status == funding.StatusPending && !row.Initiated.IsZero():
		return StepSendVerification
	}
	return ""
}

// lastFour is the account's last four digits as the service gave them,
// else as the file did.
func lastFour(row *funding.Row) string {
	if row.LastFour != "" {
		return row.LastFour
	}
	return row.Request.LastFour()
}

// account is the row's account, masked; "" for a processor row (batchd
// never sees its account) and a verification row.
func account(row *funding.Row) string {
	switch r := &row.Request; {
	case r.Account != "":
		return redact.Account(r.Account)
	case r.AccountLast4 != "":
		return "****" + r.AccountLast4
	}
	return ""
}

// settled reports whether nothing more will change the row's results
// line: it has a source or a rejection, and a micro-deposit row also has
// its deposits sent (or a reason it cannot).
func settled(row *funding.Row) bool {
	return !row.State.Open() && !awaitingInitiation(row)
}

// DeliverResults writes the results report of every funding-source and
// verification batch whose rows are all settled and whose report has not
// been delivered, in each of formats (none: CSV alone): locally under
// dir, then to out, named like a payment file's (rowrun.ResultsName of
// payment.OutboxName). A batch is stamped (ResultsReported) only after
// every copy is delivered, so a failed upload is retried by the next run;
// it does not stop the other batches' reports being written locally
// (rowrun.Delivered).
// It returns, for each batch delivered, the names of its copies.
func DeliverResults(ctx context.Context, led ResultsLedger, dir string, out report.Destination, formats []report.Format) ([]string, error) {
	return rowrun.DeliverDue(ctx, led, rowrun.Receipt{Table: ResultsTable,
		Due: func(b *payment.Batch) (bool, error) {
			if b.Kind != payment.KindSources && b.Kind != payment.KindVerifications {
				return false, nil
			}
			if b.Status != payment.BatchReady || b.OpenRows() > 0 || !b.ResultsReported.IsZero() {
				return false, nil
			}
			return allSettled(led, b.ID)
		},
		Fill: func(batch uint64, r *report.Rows) error { return WriteResults(led, batch, r) },
	}, dir, out, formats)
}

// allSettled reads the batch's rows: the batch's counts know states, not
// whether a micro-deposit row's deposits were sent.
func allSettled(led ResultsLedger, batchID uint64) (bool, error) {
	ok := true
	err := led.SourceRows(batchID, func(row *funding.Row) (bool, error) {
		ok = settled(row)
		return ok, nil
	})
	return ok, err
}
