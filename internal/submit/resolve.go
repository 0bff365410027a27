package submit

import (
	"context"
	"errors"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/resolve"
	"github.com/batchd/batchd/internal/rowrun"
)

// rows is the payment kind on the row engine (rowrun.Kind): the ledger's
// payment rows, sent by CreateCheck and looked up by resolve.Resolver.
type rows struct{ *Runner }

// Recover puts the rows found in flight in doubt.
func (r rows) Recover() (int, error) { return r.led.RecoverInFlight() }

// Doubts walks the rows in doubt.
func (r rows) Doubts(f func(*payment.Row)) error {
	return r.led.OpenRows(func(row *payment.Row) (bool, error) {
		if row.State == payment.InDoubt {
			f(row)
		}
		return true, nil
	})
}

// Timing is what the engine needs to know when row's lookup is due.
func (rows) Timing(row *payment.Row) rowrun.Timing {
	return rowrun.Timing{Key: row.Key, AttemptAt: row.AttemptAt, SendBy: row.SendBy}
}

// SendPending sends the pending rows.
func (r rows) SendPending(ctx context.Context) (int, error) { return r.sendPending(ctx) }

// Resolve hands the rows in doubt whose lookup is due to the resolver, in
// one lookup. A lookup that fails leaves them in doubt, given up on for
// the run and never resent on its account; a refused key or a ledger
// failure stops the run.
func (r rows) Resolve(ctx context.Context, due []*payment.Row) error {
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
