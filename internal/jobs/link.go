package jobs

import (
	"context"
	"fmt"

	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/payment"
)

// linkAttempts bounds the creates of one line in one run: a create is
// sent again only after the list proved the last one made no link.
const linkAttempts = 3

// CreateLink is the one rule that makes a payment link exactly once, for
// ingest's payment-link files (ingest.Options.Link). The line's intent
// (its reference and request) is in the ledger before the create leaves.
// A line whose earlier attempt may have left (its intent found, not
// settled) is first looked up in the link list (payment.FindLink): found,
// it is bound; proved absent, it is created. A create whose answer is
// lost is looked up the same way. Where the list cannot prove absence (it
// cannot be read to its end), the line is settled in doubt and reported,
// and the next application of the line looks again: never created again
// blindly. An error is a failure that left the line undone (the ledger;
// the service not acting, or refusing batchd's key): ingest stops the
// file and the next run applies it again.
func CreateLink(db payment.LinkLedger, svc payment.LinkService) ingest.LinkFunc {
	return func(ctx context.Context, l payment.Link) (payment.Link, error) {
		rec, fresh, err := db.LinkIntent(l)
		if err != nil || rec.Outcome.Settled() {
			return rec, err
		}
		for attempt := 0; attempt < linkAttempts; attempt++ {
			if !fresh || attempt > 0 {
				found, err := payment.FindLink(ctx, svc, rec.Ref, rec.Request.Amount)
				if err != nil {
					return db.LinkSettled(rec.Key, payment.LinkInDoubt, nil,
						"the create's answer was lost and the link list could not be read to its end ("+payment.ServiceMessage(err)+"): batchd looks again when the line is applied again, and never creates it blindly")
				}
				if found != nil {
					return db.LinkSettled(rec.Key, payment.LinkCreated, found, "found in the link list after a lost answer")
				}
			}
			link, err := svc.CreateLink(ctx, rec.Request)
			switch {
			case err == nil:
				return db.LinkSettled(rec.Key, payment.LinkCreated, link, "")
			case payment.FailureOf(err) == payment.FailRefused:
				return db.LinkSettled(rec.Key, payment.LinkRefused, nil, payment.ServiceMessage(err))
			case payment.FailureOf(err) != payment.FailLost:
				return rec, fmt.Errorf("create the payment link of line %d: %w", rec.Key.Line, err)
			}
		}
		return db.LinkSettled(rec.Key, payment.LinkInDoubt, nil,
			fmt.Sprintf("%d creates went unanswered and the link list does not show the link: batchd looks again when the line is applied again", linkAttempts))
	}
}
