package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/batchd/batchd/internal/payment"
)

// confirmOne fetches the check of a reported row that the list did not
// show (see pass): a row created in the listed window whose check was not
// listed, or a row not final whose check lies outside it; with nothing
// listed (no ranges: webhooks spared the walk), only a row not
// final, since a final status never changes. A 404 makes it missing; a
// check found is matched as if listed.
func (m *matcher) confirmOne(ctx context.Context, api API, o Options, w []Window, rec *record) error {
	var (
		c        *payment.Check
		notFound bool
		refused  error
	)
	err := attempt(ctx, o.Retry, fmt.Sprintf("get check %s of %s", rec.checkID, rec.key), func() error {
		var err error
		c, err = api.GetCheck(ctx, rec.checkID)
		switch {
		case errors.Is(err, payment.ErrNotFound):
			notFound = true
			return nil
		case err != nil && payment.FailureOf(err) == payment.FailRefused:
			refused = err
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	file := m.file(rec.key.Batch)
	switch {
	case notFound, refused != nil:
		e := rowException(KindMissing, rec, file)
		e.detail, e.action = "not in the list, and the service answers 404 for its id", actionMissing
		if refused != nil {
			e.detail, e.action = "not in the list, and fetching it failed: "+refused.Error(), actionUnreadable
		}
		m.mu.Lock()
		m.settleLocked(rec)
		m.excs[KindMissing+":"+rec.checkID] = e
		m.mu.Unlock()
		m.log.Warn("check of a row is missing at the service", "row", rec.key.String(), "check_id", rec.checkID)
		return nil
	}
	if listed(w, rec.serviceDate()) {
		m.log.Warn("check found by id but absent from the list of its date", "row", rec.key.String(), "check_id", rec.checkID)
	}
	return m.matched(rec, c)
}

// listed reports whether the run listed the checks of date d: ws are the
// ranges it listed, none when it listed nothing.
func listed(ws []Window, d Date) bool {
	return slices.ContainsFunc(ws, func(w Window) bool { return w.Contains(d) })
}
