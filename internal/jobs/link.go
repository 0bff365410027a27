package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
)

// linkAttempts bounds the creates of one line in one run: a create is
// sent again only after the list proved the last one made no link.
const linkAttempts = 3

// CreateLink is the one rule that makes a payment link exactly once, for
// ingest's payment-link files (ingest.Options.Link). The line's intent
// (its reference and request) is in the ledger before the create leaves.
// A line whose earlier attempt may have left (its intent found, not
// settled) is first looked up in the link list (payment.FindLink): found,
// it is bound; proved absent (the list read to its end), it is created.
// A create whose answer is lost is looked up the same way. Where the list
// cannot prove absence (it cannot be read to its end, even after a few
// tries), the line stays in doubt: the error stops the file, which stays
// claimed, and the next run looks again; never created again blindly. An
// error is also returned for any failure that left the line undone (the
// ledger; the service not acting, or refusing batchd's key).
func CreateLink(db payment.LinkLedger, svc payment.LinkService) ingest.LinkFunc {
	return func(ctx context.Context, l payment.Link) (payment.Link, error) {
		rec, fresh, err := db.LinkIntent(l)
		if err != nil || rec.Outcome.Settled() {
			return rec, err
		}
		for attempt := 0; attempt < linkAttempts; attempt++ {
			if !fresh || attempt > 0 {
				found, err := findLink(ctx, svc, rec)
				if err != nil {
					return rec, fmt.Errorf("payment link of line %d is in doubt: its create may have left, and the link list could not be read to its end to tell: %w", rec.Key.Line, err)
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
		return rec, fmt.Errorf("payment link of line %d: %d creates went unanswered, and the link list shows none of them; the next run looks again", rec.Key.Line, linkAttempts)
	}
}

// findLink is payment.FindLink, tried again while the service does not
// act (a 503, a 429, an unanswered read): a read changes nothing.
func findLink(ctx context.Context, svc payment.LinkService, rec payment.Link) (*payment.PaymentLink, error) {
	var found *payment.PaymentLink
	err := retry.Do(ctx, retry.Policy{Base: 100 * time.Millisecond, Max: 2 * time.Second, MaxAttempts: 6}, func(ctx context.Context) error {
		var err error
		found, err = payment.FindLink(ctx, svc, rec.Ref, rec.Request.Amount)
		if f := payment.FailureOf(err); err != nil && (f == payment.FailKeyRefused || f == payment.FailRefused) {
			return retry.Permanent(err)
		}
		return err
	})
	return found, err
}
