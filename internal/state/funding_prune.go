package state

import (
	"context"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
)

// SourceArchiver is an Archiver for a funding-source or verification
// batch: it writes the batch's funding rows somewhere durable and returns
// nil only once they are. It may be called again for the same batch, and
// then replaces what it wrote before.
type SourceArchiver func(b *payment.Batch, rows func(fn func(*funding.Row) error) error) error

// A funding row is final when it was rejected, or submitted with a
// status that is not Tracked (nothing more happens to it by itself); it
// owns its source id unless it is a Verify row (sourceRows, funding.go).

// sourceFinal reports whether nothing more will happen to a funding row.
func sourceFinal(r *funding.Row) bool {
	return r.State == payment.Rejected || (r.State == payment.Submitted && !r.Status.Tracked())
}

// sourceLastChange is when a funding row last changed: its latest history
// step (every change adds one).
func sourceLastChange(r *funding.Row) time.Time {
	var t time.Time
	for _, s := range r.History {
		if s.At.After(t) {
			t = s.At
		}
	}
	return t
}

// PruneSources is Prune for funding-source and verification batches, by
// the same rules: a batch refused, or ready with every row final
// (sourceFinal), its results report delivered (ResultsReported) and its
// last change before before, is handed to archive and then removed with
// its rows and their src_open, src_track and src_ids entries, in one
// transaction. Payment batches are Prune's and are left alone.
func (d *DB) PruneSources(ctx context.Context, before time.Time, archive SourceArchiver) (PruneSummary, error) {
	return d.prune(ctx, before, sourceRows.rowKind, sourceRows.archiver(archive))
}
