package reconcile

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// The status report is written while the list is walked. A pass over the
// ledger, in batch and line order, runs alongside the walk: it hands out
// each row's status line as soon as the row is settled, that is once the
// walk has looked at its check, or, for a row the walk may not show, once
// the walk is over. Most of the report is then written while the walk
// waits on the rate limiter, and little work is left after its last
// request. Rows the walk did not show are confirmed by GET in the same
// pass, concurrently but still written in order. The settlement is summed
// and the stuck checks found from the very lines written.
//
// A line shows its row as it was when the walk first looked at its check,
// or, when the matcher could not keep that record (readAhead), as read
// from the ledger after that look; never as read before the walk's
// observation of it committed. Should a later pass of the walk (the list
// changed while it was read) see the check again with yet another status,
// the ledger records it, and the next run reports it.

// freshCap bounds the records the matcher keeps for the pass of rows the
// walk looked at before the pass reached them; past it, the pass reads the
// row again, with the next such rows (readAhead).
const freshCap = 4096

// settle marks k looked at, and keeps rec for the pass unless the pass
// has already written the row. Called with m.mu held.
func (m *matcher) settleLocked(rec *record) {
	if m.checked.add(rec.key) && !m.written.has(rec.key) && len(m.fresh) < m.keep {
		m.fresh[rec.key] = rec
	}
	m.wakeLocked()
}

func (m *matcher) wakeLocked() {
	if m.cond != nil {
		m.cond.Broadcast()
	}
}

// wake wakes the pass (on a cancelled run).
func (m *matcher) wake() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.wakeLocked()
}

// walkOver tells the pass that the walk is over, and which date ranges
// it listed (none: it listed nothing).
func (m *matcher) walkOver(listedW []Window) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.walked, m.listedW = true, listedW
	m.wakeLocked()
}

// await waits until row k is settled: its check was looked at (true), or
// the walk is over (false).
func (m *matcher) await(ctx context.Context, k payment.RowKey) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for !m.checked.has(k) && !m.walked && ctx.Err() == nil {
		m.cond.Wait()
	}
	return m.checked.has(k), ctx.Err()
}

// awaitWalk waits until the walk is over: the pass commits its report
// only then, so that a run that fails in the walk leaves none.
func (m *matcher) awaitWalk(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for !m.walked && ctx.Err() == nil {
		m.cond.Wait()
	}
	return ctx.Err()
}

// reportPass is the pass, running: the status report being written.
type reportPass struct {
	cancel context.CancelFunc
	done   chan struct{}
	res    passResult
	err    error
}

// passResult is what the pass wrote and learnt.
type passResult struct {
	status     []string // the status report's paths
	lines      int
	confirmed  int // rows fetched by GET
	unlisted   int // of those, the rows not final on dates not listed: the GETs the plan meant
	settlement *settlement
	open       map[uint64]bool // batches with rows not final
}

// startPass starts writing the status report to path.
func (r *Runner) startPass(ctx context.Context, api API, m *matcher, path string, today Date) *reportPass {
	ctx, cancel := context.WithCancel(ctx)
	p := &reportPass{cancel: cancel, done: make(chan struct{}),
		res: passResult{settlement: newSettlement(), open: map[uint64]bool{}}}
	go func() {
		defer close(p.done)
		p.res.status, p.res.lines, p.err = writeStatus(path, r.opts.Formats, func(add func(statusLine) error) error {
			return r.pass(ctx, api, m, today, &p.res, add)
		})
	}()
	return p
}

// wait returns the pass's result once the report is written (or failed).
func (p *reportPass) wait() (passResult, error) {
	<-p.done
	return p.res, p.err
}

// abort stops the pass, which then writes no report.
func (p *reportPass) abort() {
	p.cancel()
	<-p.done
}

// slot is one row on its way to the report: ready once its record is
// final for this run (at once, or after its check was fetched).
type slot struct {
	rec  *record
	todo bool // to confirm by GET
	// unlisted: to fetch because the plan listed no date of it (a GET
	// the plan counted), not because a list lacked it
	unlisted bool
	ready    chan struct{}
	err      error
}

// pass feeds the rows to the writer (emit) in order, through a bounded
// queue of slots, and the rows to confirm to o.Concurrency fetchers.
func (r *Runner) pass(ctx context.Context, api API, m *matcher, today Date, res *passResult, add func(statusLine) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The waits in await end when ctx does: the wake must come from this
	// very ctx, whose Err is set before its AfterFunc runs (a wake from a
	// parent could run before this ctx is cancelled, and be missed).
	stop := context.AfterFunc(ctx, m.wake)
	defer stop()
	o := r.opts
	slots, jobs := make(chan *slot, 4*o.Concurrency), make(chan *slot)
	var fetchers sync.WaitGroup
	for range o.Concurrency {
		fetchers.Add(1)
		go func() {
			defer fetchers.Done()
			for s := range jobs {
				s.err = m.confirmSlot(ctx, api, o, s)
				close(s.ready)
			}
		}()
	}
	emitted := make(chan error, 1)
	go func() { emitted <- r.emit(ctx, cancel, m, today, slots, res, add) }()
	err := m.feed(ctx, slots, jobs, res)
	close(jobs)
	close(slots)
	if eerr := <-emitted; eerr != nil {
		err = eerr
	}
	fetchers.Wait()
	if res.confirmed > 0 {
		m.log.Info("checks absent from the list confirmed", "checks", res.confirmed)
	}
	return err
}

// feed reads the ledger and queues every row the report may show, once
// settled. A row whose check the walk cannot list (created outside the
// run's window) and that is final is left out at once; any other row is
// awaited, so a row the walk will show is never written before.
func (m *matcher) feed(ctx context.Context, slots, jobs chan<- *slot, res *passResult) error {
	ahead := newReadAhead(m)
	err := m.eachRowQueued(ctx, func(r *payment.Row) (bool, error) {
		s, err := m.settled(ctx, r, ahead)
		ahead.passed(r.Key)
		if err == nil && s == nil {
			m.noteFinalRow(r) // left out of the status report, not of the exceptions and receipts
		}
		if err != nil || s == nil {
			return err == nil, err
		}
		if s.todo {
			if res.confirmed == 0 {
				m.log.Info("confirming checks absent from the list")
			}
			res.confirmed++
			if s.unlisted {
				res.unlisted++
			}
			select {
			case jobs <- s:
			case <-ctx.Done():
				return false, ctx.Err()
			}
		}
		select {
		case slots <- s:
			return true, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	})
	if err != nil {
		return err
	}
	return m.awaitWalk(ctx)
}

// settled waits for row r to settle and returns its slot, or nil when the
// report does not show it. ahead reads the rows whose records were not
// kept.
func (m *matcher) settled(ctx context.Context, r *payment.Row, ahead *readAhead) (*slot, error) {
	owned := r.State == payment.Submitted && r.CheckID != ""
	switch r.State {
	case payment.Submitted, payment.InDoubt, payment.InFlight, payment.Pending: // may be looked at in this run
	default:
		return nil, nil
	}
	if owned && !m.window.Contains(DateOf(r.CheckCreated.UTC())) && r.CheckStatus.Final() {
		// Created outside the window and final: not listed, never
		// confirmed, not reported. (Should the service list it all the
		// same, under another date, the ledger records what it says; the
		// report does not show it.)
		m.mu.Lock()
		m.written.add(r.Key) // keep no record of it for the pass
		m.mu.Unlock()
		return nil, nil
	}
	checked, err := m.await(ctx, r.Key)
	if err != nil {
		return nil, err
	}
	s := &slot{ready: make(chan struct{})}
	if checked {
		if s.rec, err = m.freshRecord(r.Key, ahead); err != nil {
			return nil, err
		}
		close(s.ready)
		return s, nil
	}
	if !owned {
		return nil, nil
	}
	s.rec = recordOf(r)
	m.mu.Lock()
	on := listed(m.listedW, s.rec.serviceDate())
	s.todo = on || !s.rec.final()
	s.unlisted = s.todo && !on
	m.written.add(r.Key)
	m.mu.Unlock()
	if !s.todo && !m.reported(s.rec, false) {
		return nil, nil
	}
	if !s.todo {
		close(s.ready)
	}
	return s, nil
}

// freshRecord is the record of a row the walk looked at: the one it kept,
// or the row read since (ahead).
func (m *matcher) freshRecord(k payment.RowKey, ahead *readAhead) (*record, error) {
	m.mu.Lock()
	rec := m.fresh[k]
	delete(m.fresh, k)
	m.written.add(k)
	m.mu.Unlock()
	if rec != nil {
		return rec, nil
	}
	return ahead.record(k)
}

// confirmSlot fetches the check of a slot's row and leaves in the slot the
// row as that made it.
func (m *matcher) confirmSlot(ctx context.Context, api API, o Options, s *slot) error {
	m.mu.Lock()
	w := m.listedW
	m.mu.Unlock()
	if err := m.confirmOne(ctx, api, o, w, s.rec); err != nil {
		return err
	}
	row, err := m.db.Row(s.rec.key)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.rec.key, err)
	}
	s.rec = recordOf(row)
	return nil
}

// emit writes the slots' lines in order, each once ready, sums them into
// the settlement, and notes stuck checks and the batches with rows not
// final. After an error it only drains the queue.
func (r *Runner) emit(ctx context.Context, cancel func(), m *matcher, today Date, slots <-chan *slot, res *passResult, add func(statusLine) error) error {
	o := r.opts
	days := map[Date]int{}
	var firstErr error
	for s := range slots {
		<-s.ready
		if firstErr != nil {
			continue
		}
		err := s.err
		if err == nil {
			l := statusLineOf(s.rec, m.file(s.rec.key.Batch), o.Location)
			if l.bank, err = m.banks.Name(s.rec.routing); err == nil {
				err = res.settlement.add(l)
			}
			if err == nil {
				err = add(l)
			}
		}
		if err != nil {
			firstErr = err
			cancel()
			continue
		}
		m.noteFinal(s.rec)
		if !s.rec.final() {
			res.open[s.rec.key.Batch] = true
			m.stuck(s.rec, today, o.Location, o.Calendar, o.StuckAfterBusinessDays, days)
		}
	}
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

// stuck reports rec's check, not final, when stuckAfter whole business
// days have passed since it was created, unless it is reported missing.
// days caches the count per creation date.
func (m *matcher) stuck(rec *record, today Date, loc *time.Location, calendar *Calendar, stuckAfter int, days map[Date]int) {
	created := DateOf(rec.created.In(loc))
	n, ok := days[created]
	if !ok {
		n = calendar.BusinessDaysBetween(created, today)
		days[created] = n
	}
	if n < stuckAfter {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.excs[KindMissing+":"+rec.checkID] != nil {
		return
	}
	e := rowException(KindStuck, rec, m.files[rec.key.Batch])
	e.detail = fmt.Sprintf("%s for %d business days since it was created on %s", rec.status.String(), n, created)
	if !rec.statusSeen.IsZero() {
		e.detail += "; status last changed " + rec.statusSeen.In(loc).Format(time.DateTime)
	}
	e.action = actionStuck
	m.excs[KindStuck+":"+rec.key.String()] = e
}

// findTwins notes, for finish, a reported row carrying the identity of
// each listed check no row owns: such a check may be a duplicate payment.
// It reads the ledger once more, and only when there are such checks.
func (m *matcher) findTwins(ctx context.Context) error {
	unknown := m.unknownIdentities()
	if len(unknown) == 0 {
		return nil
	}
	return m.eachRow(ctx, func(r *payment.Row) (bool, error) {
		m.mu.Lock()
		defer m.mu.Unlock()
		checked := m.checked.has(r.Key)
		if !checked && (r.State != payment.Submitted || r.CheckID == "") {
			return true, nil
		}
		rec := recordOf(r)
		if id := rec.identity().Key(); unknown[id] && m.reported(rec, checked) {
			m.twins[id] = rec
		}
		return true, nil
	})
}

// unknownIdentities are the identity keys of the listed checks no row
// owns.
func (m *matcher) unknownIdentities() map[string]bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]bool, len(m.unknown))
	for id, c := range m.unknown {
		if _, heard := m.heard[id]; !heard {
			out[c.Identity().Key()] = true
		}
	}
	return out
}

// reported says whether the status report shows rec: its check was
// created in the run's window, or is not final, or was looked at in this
// run.
func (m *matcher) reported(rec *record, checked bool) bool {
	return checked || !rec.final() || m.window.Contains(rec.serviceDate())
}
