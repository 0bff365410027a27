package submit

import (
	"context"
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/rowrun"
)

// RedeliverResults writes again, through rowrun.DeliverBatch, the results report
// of each batch named (those with a check that reached a final status in
// a reconcile run), so that a file's receipt in the outbox shows each
// row's latest status: a check deposited, returned or voided after the
// receipt was first delivered would otherwise stay "in_process" there.
// The caller names each batch once per run, so a receipt is rewritten at
// most once per run. A batch whose receipt was never delivered is left
// to DeliverResults, which writes it with the latest statuses anyway. It
// tries every batch and returns the names of the reports written.
func RedeliverResults(ctx context.Context, db ResultsLedger, batches []uint64, dir string, out report.Destination, formats []report.Format) ([]string, error) {
	var done []string
	var errs []error
	for _, id := range batches {
		b, err := db.Batch(id)
		if err != nil {
			errs = append(errs, fmt.Errorf("results of batch %d: %w", id, err))
			continue
		}
		if !b.Kind.Payments() || b.ResultsReported.IsZero() {
			continue
		}
		names, err := rowrun.DeliverBatch(ctx, db, b, dir, out, formats, ResultsTable,
			func(r *report.Rows) error { return WriteResults(db, b.ID, r) })
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, names)
	}
	return done, errors.Join(errs...)
}
