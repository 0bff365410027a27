package paymentlink

import (
	"context"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
)

// createAttempts bounds the creates of one line in one run: a create is
// sent again only after the list proved the last one made no link.
const createAttempts = 3

// create is the one rule that makes a payment link exactly once. The
// line's intent (its reference and request) is in the ledger before the
// create leaves. Every line is first looked up in the link list (Find),
// its intent fresh or not: found, it is bound; proved absent (the list
// read to its end), it is created. A fresh intent proves nothing of the
// service: a ledger restored from a snapshot, or a database that failed
// over and lost its last writes, forgets intents whose creates left, and
// the same file dropped again then finds none; the lookup costs one
// search per line, and keeps exactly-once from resting on the ledger. A
// create whose answer is lost is looked up the same way. A line sent
// without batchd's reference (memo_reference off) is looked up only when
// its intent was found or an answer was lost: its memo and amount could be
// an older link's (readLine refuses those batchd knows of), and a lookup
// would then bind that one. Where the list
// cannot prove absence (it cannot be read to its end, even after a few
// tries), the line stays in doubt: the error stops the file, which stays
// claimed, and the next run looks again; never created again blindly. An
// error is also returned for any failure that left the line undone (the
// ledger; the service not acting, or refusing batchd's key).
func (k *Kind) create(ctx context.Context, l Line) (Line, error) {
	rec, fresh, err := intent(k.db, l, k.now())
	if err != nil || rec.Outcome.Settled() {
		return rec, err
	}
	for attempt := 0; attempt < createAttempts; attempt++ {
		if attempt > 0 || !rec.NoRef || !fresh {
			found, err := k.find(ctx, rec)
			if err != nil {
				return rec, fmt.Errorf("payment link of line %d is in doubt: a create may have left, and the link list could not be read to its end to tell: %w", rec.Key.Line, err)
			}
			if found != nil {
				return settle(k.db, rec.Key, Created, found, "found in the link list: made by an earlier run", k.now())
			}
		}
		link, err := k.svc.CreateLink(ctx, rec.Request)
		switch {
		case err == nil:
			return settle(k.db, rec.Key, Created, link, "", k.now())
		case payment.FailureOf(err) == payment.FailRefused:
			return settle(k.db, rec.Key, Refused, nil, payment.ServiceMessage(err), k.now())
		case payment.FailureOf(err) != payment.FailLost:
			return rec, fmt.Errorf("create the payment link of line %d: %w", rec.Key.Line, err)
		}
	}
	return rec, fmt.Errorf("payment link of line %d: %d creates went unanswered, and the link list shows none of them; the next run looks again", rec.Key.Line, createAttempts)
}

// find is Find, tried again as read tries.
func (k *Kind) find(ctx context.Context, rec Line) (*Link, error) {
	var found *Link
	err := k.read(ctx, func(ctx context.Context) (err error) {
		found, err = Find(ctx, k.svc, rec)
		return err
	})
	return found, err
}

// read runs a read of the service, tried again while the service does not
// act (a 503, a 429, an unanswered read): a read changes nothing. A
// refusal, of the request or of batchd's key, is final.
func (k *Kind) read(ctx context.Context, fn func(context.Context) error) error {
	return retry.Do(ctx, retry.Policy{Base: 100 * time.Millisecond, Max: 2 * time.Second, MaxAttempts: 6}, func(ctx context.Context) error {
		err := fn(ctx)
		if f := payment.FailureOf(err); err != nil && (f == payment.FailKeyRefused || f == payment.FailRefused) {
			return retry.Permanent(err)
		}
		return err
	})
}
