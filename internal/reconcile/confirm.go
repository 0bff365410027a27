package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/batchd/batchd/internal/payment"
)

// confirm fetches, one by one, the check of every reported row that the
// list did not show: a row created on a listed date whose check was not
// listed, or a row not final whose check lies outside the listed ranges.
// A 404 makes it missing; a check found is matched as if listed. It
// returns how many it fetched, and how many of those were rows not final
// on dates not listed: the GETs the plan meant, as opposed to those of
// checks a list lacked. No ranges means nothing was listed (webhooks
// spared the walk): then only the rows not final are fetched, since a
// final status never changes.
func (m *matcher) confirm(ctx context.Context, api API, o Options, w []Window) (fetched, unlisted int, err error) {
	m.mu.Lock()
	var todo []*record
	for k, rec := range m.records {
		if m.checked[k] {
			continue
		}
		if on := listed(w, rec.serviceDate()); on || !rec.final() {
			todo = append(todo, rec)
			if !on {
				unlisted++
			}
		}
	}
	m.mu.Unlock()
	if len(todo) == 0 {
		return 0, 0, nil
	}
	slices.SortFunc(todo, func(a, b *record) int { return compareKeys(a.key, b.key) })
	m.log.Info("confirming checks absent from the list", "checks", len(todo))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan *record)
	var (
		wg       sync.WaitGroup
		errMu    sync.Mutex
		firstErr error
	)
	for range o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rec := range jobs {
				if err := m.confirmOne(ctx, api, o, w, rec); err != nil {
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					errMu.Unlock()
				}
			}
		}()
	}
	n := 0
	for _, rec := range todo {
		if ctx.Err() != nil {
			break
		}
		jobs <- rec
		n++
	}
	close(jobs)
	wg.Wait()
	return n, unlisted, firstErr
}

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
		m.checked[rec.key] = true
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

func compareKeys(a, b payment.RowKey) int {
	switch {
	case a.Batch != b.Batch:
		if a.Batch < b.Batch {
			return -1
		}
		return 1
	case a.Line < b.Line:
		return -1
	case a.Line > b.Line:
		return 1
	}
	return 0
}
