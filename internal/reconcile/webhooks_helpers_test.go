package reconcile

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// fakeEvents stands in for the ledger's record of webhook events about
// checks no row owns, and notes every since it is asked for.
type fakeEvents struct {
	mu    sync.Mutex
	evs   []UnknownEvent
	since []time.Time
}

func (f *fakeEvents) UnknownEvents(since time.Time) ([]UnknownEvent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.since = append(f.since, since)
	var out []UnknownEvent
	for _, ev := range f.evs {
		if !ev.At.Before(since) {
			out = append(out, ev)
		}
	}
	return out, nil
}

func (f *fakeEvents) add(ev UnknownEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.evs = append(f.evs, ev)
}

func (f *fakeEvents) asked() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.since...)
}

// hooked is o with webhooks on, reading unknown checks from ev.
func hooked(ev EventSource, o Options) Options {
	o.Webhooks, o.Events = true, ev
	return o
}

// deliver does what the webhook receiver does for status changes that
// deposit checks: the service deposits them (so that a walk would see the
// same), and the ledger records the change the event carried. Both go in
// chunks, as the sandbox's body limit and one transaction per chunk allow.
func (e *env) deliver(keys []payment.RowKey, ids []string) {
	e.t.Helper()
	const chunk = 1000
	for i := 0; i < len(ids); i += chunk {
		j := min(i+chunk, len(ids))
		e.deposit(ids[i:j]...)
		obs := make([]payment.Observation, 0, j-i)
		for _, k := range keys[i:j] {
			obs = append(obs, payment.Observation{Key: k, Status: payment.StatusDeposited})
		}
		if _, err := e.db.ObserveStatuses(obs, e.clock.Now()); err != nil {
			e.t.Fatal(err)
		}
	}
}

// fullWalked records a full walk now, as a run that made one would.
func (e *env) fullWalked() {
	e.t.Helper()
	if err := e.db.RecordSuccess(FullWalkJob, e.clock.Now()); err != nil {
		e.t.Fatal(err)
	}
}

// everyRunWalks makes a full walk due at every run of o.
func everyRunWalks(o Options) Options {
	o.FullWalkEvery = time.Nanosecond
	return o
}

// settledLedger creates n checks in batches of up to 10,000, reconciles
// them once with webhooks on (a full walk: none is recorded yet), then
// delivers deposits for the first final of them, as the receiver would.
// It returns the rows' keys and check ids in the same order.
func settledLedger(tb testing.TB, e *env, n, final int, ev EventSource) ([]payment.RowKey, []string) {
	tb.Helper()
	var keys []payment.RowKey
	var ids []string
	for b := 0; b*10_000 < n; b++ {
		batch := e.load(fmt.Sprintf("settled-%d.csv", b), manyPayments(min(10_000, n-b*10_000))...)
		byLine := e.submitBatch(batch, 64)
		for _, k := range e.keys(batch) {
			keys, ids = append(keys, k), append(ids, byLine[k.Line])
		}
	}
	if sum := e.run(hooked(ev, Options{})); sum.Plan != PlanFullWalk || sum.Matched != n {
		tb.Fatalf("first run: %+v", sum)
	}
	e.deliver(keys[:final], ids[:final])
	return keys, ids
}

// reportBytes reads the status and settlement reports of run date d.
func (e *env) reportBytes(d Date) (status, settlement []byte) {
	e.t.Helper()
	var err error
	if status, err = os.ReadFile(e.reportPath("status", d)); err != nil {
		e.t.Fatal(err)
	}
	if settlement, err = os.ReadFile(e.reportPath("settlement", d)); err != nil {
		e.t.Fatal(err)
	}
	return status, settlement
}

// singleRangeCalls is what the plan before cheapestRanges would have cost
// on the same counts, the baseline the new plan is measured against: it
// listed one range, from the first to the last date of the open rows in
// w, when that range's estimate (a page per pageSize rows, plus one)
// with a GET for each open row outside w came to no more than a GET for
// every open row; else it fetched them all. The walk is counted at its
// pages without the estimate's extra one, as a walk of a list holding
// only batchd's checks takes.
func singleRangeCalls(days []dayCount, w Window, pageSize int) int {
	in, outside := splitWindow(days, w)
	open, first, last := outside, -1, -1
	for i, d := range in {
		open += d.open
		if d.open > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return open
	}
	rows := 0
	for _, d := range in[first : last+1] {
		rows += d.rows
	}
	if ceilDiv(rows, pageSize)+1+outside <= open {
		return ceilDiv(rows, pageSize) + outside
	}
	return open
}

// spreadLedger creates checks over consecutive days, perDay(i) on day i
// of days, moving the sandbox's clock and the test's a day after each,
// so that the service dates each day's checks that day; it then
// reconciles once with webhooks on (a full walk, recorded) and deposits
// every check but those of the last day and the one stray (day stray,
// its first row), at the service and in the ledger, as the webhook
// receiver would. It returns the rows not final.
func spreadLedger(tb testing.TB, e *env, days int, perDay func(int) int, stray int, ev EventSource) []payment.RowKey {
	tb.Helper()
	var finalKeys, openKeys []payment.RowKey
	var finalIDs []string
	for d := range days {
		batch := e.load(fmt.Sprintf("day-%d.csv", d), manyPayments(perDay(d))...)
		byLine := e.submitBatch(batch, 64)
		for i, k := range e.keys(batch) {
			if d == days-1 || (d == stray && i == 0) {
				openKeys = append(openKeys, k)
				continue
			}
			finalKeys, finalIDs = append(finalKeys, k), append(finalIDs, byLine[k.Line])
		}
		if d < days-1 {
			e.advance(1)
		}
	}
	if sum := e.run(hooked(ev, Options{})); sum.Plan != PlanFullWalk {
		tb.Fatalf("first run: %+v", sum)
	}
	e.deliver(finalKeys, finalIDs)
	return openKeys
}

// countDays is the matcher's count of the env's ledger by service date.
func (e *env) countDays() []dayCount {
	e.t.Helper()
	m, err := newMatcher(e.db, e.clock.Now, slog.New(slog.DiscardHandler))
	if err != nil {
		e.t.Fatal(err)
	}
	days, err := m.dayCounts(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return days
}
