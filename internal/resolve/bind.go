// Package resolve settles rows in doubt: rows whose create request may or
// may not have made a check, because its answer was lost or the process
// died with the request out.
//
// Two functions do it, and nothing else in batchd changes a row in doubt:
//   - Bind records, for a row in doubt, a check that payment.Belongs to
//     it. Submit's lookup and reconcile's walk both go through it.
//   - Resolver.Resolve, which submit owns, looks rows up at the service,
//     binds what it finds, and releases to pending only the rows that a
//     complete lookup proved have no check, and only once their send-by
//     deadline plus SendMargin has passed (ReleasableAt): before that a
//     create may still leave from an instance that lost the lead. Binding
//     is safe at any time.
//
// The ledger applies each change atomically and refuses one that no longer
// fits the row's state (payment.ErrIllegal), so when reconcile binds a row
// while submit resolves it, one of them wins and the other sees the row
// already settled: two jobs never both change it.
package resolve

import (
	"context"
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/payment"
)

// Bind records, for each row in doubt (or in flight) among rows, the first
// check among checks that belongs to it by payment.Belongs. A check binds
// to one row at most, and never to a row other than the one that owns it.
// A row that another job settled meanwhile is left alone. It returns the
// rows it bound, as they now are; its error is a ledger failure (or ctx's).
func Bind(ctx context.Context, led payment.Rows, rows []*payment.Row, checks []payment.Check, note string) (map[payment.RowKey]*payment.Row, error) {
	bound := map[payment.RowKey]*payment.Row{}
	if len(rows) == 0 || len(checks) == 0 {
		return bound, nil
	}
	ids := make([]string, 0, len(checks))
	for i := range checks {
		if checks[i].ID != "" {
			ids = append(ids, checks[i].ID)
		}
	}
	owners, err := led.CheckOwners(ids)
	if err != nil {
		return bound, fmt.Errorf("look up the owners of %d checks: %w", len(ids), err)
	}
	for _, row := range rows {
		if err := ctx.Err(); err != nil {
			return bound, err
		}
		if row.State != payment.InDoubt && row.State != payment.InFlight {
			continue
		}
		for i := range checks {
			c := &checks[i]
			if c.ID == "" {
				continue
			}
			k, owned := owners[c.ID]
			if !payment.Belongs(row, c, payment.Owner{Key: k, Owned: owned}) {
				continue
			}
			got, err := led.Created(row.Key, payment.ResultOf(c, note))
			switch {
			case errors.Is(err, payment.ErrIllegal):
				// Settled by another job since it was read: not ours to change.
			case errors.Is(err, payment.ErrCheckOwned):
				continue // bound to another row meanwhile
			case err != nil:
				return bound, fmt.Errorf("record check %s for %s: %w", c.ID, row.Key, err)
			default:
				bound[row.Key] = got
				owners[c.ID] = row.Key
			}
			break
		}
	}
	return bound, nil
}
