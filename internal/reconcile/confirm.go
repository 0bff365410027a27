package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/batchd/batchd/internal/payment"
)

// confirm fetches the check of every reported row that the list did not
// show: a row created in the listed window whose check was not listed, or
// a row not final whose check lies outside it. A 404 makes it missing; a
// check found is matched as if listed. It returns how many it fetched.
// The zero Window means nothing was listed (webhooks spared the walk):
// then only the rows not final are fetched, since a final status never
// changes.
//
// It streams the ledger in batch and line order, handing each row to
// fetch to o.Concurrency workers as it is read, so neither the rows nor a
// list of them is held. On the way it notes the reported rows that carry
// the identity of a listed check no row owns (twins), for finish.
func (m *matcher) confirm(ctx context.Context, api API, o Options, w Window) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan *record)
	var (
		wg       sync.WaitGroup
		errMu    sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		errMu.Lock()
		defer errMu.Unlock()
		if firstErr == nil {
			firstErr = err
			cancel()
		}
	}
	for range o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rec := range jobs {
				if err := m.confirmOne(ctx, api, o, w, rec); err != nil {
					fail(err)
				}
			}
		}()
	}
	unknown := m.unknownIdentities()
	n := 0
	err := m.eachReported(ctx, func(r *payment.Row, checked bool) (bool, error) {
		rec := recordOf(r)
		todo := !checked && (listed(w, rec.serviceDate()) || !rec.final())
		if unknown[rec.identity().Key()] && (todo || m.reported(rec, checked)) {
			m.mu.Lock()
			m.twins[rec.identity().Key()] = rec
			m.mu.Unlock()
		}
		if !todo {
			return true, nil
		}
		if n == 0 {
			m.log.Info("confirming checks absent from the list")
		}
		select {
		case jobs <- rec:
			n++
			return true, nil
		case <-ctx.Done():
			return false, nil
		}
	})
	close(jobs)
	wg.Wait()
	if err != nil {
		fail(err)
	}
	if n > 0 {
		m.log.Info("checks absent from the list confirmed", "checks", n)
	}
	return n, firstErr
}

// unknownIdentities are the identity keys of the listed checks no row
// owns.
func (m *matcher) unknownIdentities() map[string]bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]bool, len(m.unknown))
	for _, c := range m.unknown {
		out[c.Identity().Key()] = true
	}
	return out
}

// eachReported calls fn, in batch and line order, with every submitted
// row that holds a check and with every row checked in this run, saying
// which; it stops when fn returns false or an error, or ctx ends. The
// rows come from the ledger as it is now, a chunk at a time.
func (m *matcher) eachReported(ctx context.Context, fn func(r *payment.Row, checked bool) (bool, error)) error {
	for _, b := range m.batches {
		if b.Status != payment.BatchReady {
			continue
		}
		stopped := false
		err := m.db.Rows(b.ID, func(r *payment.Row) (bool, error) {
			if err := ctx.Err(); err != nil {
				return false, err
			}
			m.mu.Lock()
			checked := m.checked.has(r.Key)
			m.mu.Unlock()
			if !checked && (r.State != payment.Submitted || r.CheckID == "") {
				return true, nil
			}
			more, err := fn(r, checked)
			stopped = !more
			return more, err
		})
		if err != nil {
			return fmt.Errorf("read rows of batch %d: %w", b.ID, err)
		}
		if stopped || ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// reported says whether the status report shows rec: its check was
// created in the run's window, or is not final, or was looked at in this
// run.
func (m *matcher) reported(rec *record, checked bool) bool {
	return checked || !rec.final() || m.window.Contains(rec.serviceDate())
}

func (m *matcher) confirmOne(ctx context.Context, api API, o Options, w Window, rec *record) error {
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
		m.checked.add(rec.key)
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

// listed reports whether the run listed the checks of date d: w is the
// listed window, the zero Window when the run listed none.
func listed(w Window, d Date) bool { return w != (Window{}) && w.Contains(d) }
