package submit

import (
	"context"
	"errors"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/resolve"
)

// resolveDue hands the rows in doubt whose lookup is due to the resolver, in
// one lookup. A lookup that fails leaves them in doubt, given up on for
// the run and never resent on its account; a refused key or a ledger
// failure stops the run.
func (r *Runner) resolveDue(ctx context.Context, due []*payment.Row) error {
	out, err := r.resolver.Resolve(ctx, due)
	r.addCreated(out.Found)
	r.resent.Add(int64(out.Released))
	switch {
	case errors.Is(err, resolve.ErrLookup):
		r.eng.Undone(err)
		for _, row := range due {
			r.eng.Skip(row.Key)
		}
		r.log.Error("lookup of rows in doubt failed; they stay in doubt and are not resent", "rows", len(due), "err", err)
		return nil
	case errors.Is(err, payment.ErrKeyRefused), errors.Is(err, payment.ErrLedger):
		r.eng.Halt(err)
		return err
	case err != nil:
		return err
	}
	if out.Found+out.Released > 0 {
		// After a rewind of the ledger's database this is the line that
		// says what the lookups of the rows put in doubt found.
		r.log.Info("rows in doubt resolved", "looked_up", len(due), "found", out.Found, "sent_again", out.Released)
	}
	return nil // risky checks found here are voided by the sweep at the end of the run
}
