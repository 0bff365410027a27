package reconcile

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
)

// TestWebhooksOffReadsNoEvents: without webhooks the first run is a full
// walk that asks for no events and records itself and its listing of the
// recent dates.
func TestWebhooksOffReadsNoEvents(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		e.submitBatch(e.load("a.csv", manyPayments(3)...), 2)
		ev := &fakeEvents{}
		sum := e.run(Options{Events: ev})
		if sum.Plan != PlanFullWalk || sum.Calls != 1 || sum.PagesRead != 1 || sum.Matched != 3 {
			t.Fatalf("summary %+v", sum)
		}
		if len(ev.asked()) != 0 {
			t.Error("events were read with webhooks off")
		}
		for _, job := range []string{FullWalkJob, ListedJob} {
			if at, ok, _ := e.db.LastSuccess(job); !ok || !at.Equal(e.clock.Now()) {
				t.Errorf("%s recorded %v %v, want the run's start", job, at, ok)
			}
		}
	})
}

// TestWebhooksFetchFewOpenRows: three rows of 300 are not final; fetching
// them (3 requests) beats listing their date (about 4 pages).
func TestWebhooksFetchFewOpenRows(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		ev := &fakeEvents{}
		keys, _ := settledLedger(t, e, 300, 297, ev)
		e.advance(3) // the three open checks are printed now; no event said so
		sum := e.run(hooked(ev, Options{}))
		if sum.Plan != PlanFetch || sum.Calls != 3 || sum.Confirmed != 3 || sum.PagesRead != 0 ||
			sum.StatusChanges != 3 || sum.StatusRows != 300 || !sum.Consistent {
			t.Fatalf("summary %+v", sum)
		}
		for _, k := range keys[297:] {
			if r, _ := e.db.Row(k); r.CheckStatus != payment.StatusPrinted {
				t.Errorf("%s: %s, want printed", k, r.CheckStatus)
			}
		}
	})
}

// TestWebhooksWalkManyOpenRows: 200 rows of 300 created on Monday are not
// final; listing Monday (3 pages) beats 200 fetches. Tuesday's checks,
// all final, are not listed, though the report still shows them.
func TestWebhooksWalkManyOpenRows(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		ev := &fakeEvents{}
		settledLedger(t, e, 300, 100, ev)
		e.advance(1)
		tue := e.load("tuesday.csv", manyPayments(150)...)
		ids := e.submitBatch(tue, 8)
		var tueIDs []string
		for _, k := range e.keys(tue) {
			tueIDs = append(tueIDs, ids[k.Line])
		}
		e.deliver(e.keys(tue), tueIDs)
		e.advance(2)
		sum := e.run(hooked(ev, Options{}))
		if sum.Plan != PlanWalk || sum.PagesRead != 3 || sum.Calls != 3 || sum.Confirmed != 0 ||
			sum.StatusChanges != 200 || sum.StatusRows != 450 || !sum.Consistent {
			t.Fatalf("summary %+v", sum)
		}
		if !strings.Contains(sum.PlanReason, "2026-03-02..2026-03-02") {
			t.Errorf("plan %q does not list Monday alone", sum.PlanReason)
		}
	})
}

// TestWebhooksRowsInDoubtForceTheWalk: only a listed check can resolve a
// row whose create answer was lost, so the run lists the window.
func TestWebhooksRowsInDoubtForceTheWalk(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		ev := &fakeEvents{}
		settledLedger(t, e, 10, 10, ev)
		e.advance(1)
		k := e.keys(e.load("doubt.csv", pay(777, 16, "Lost Answer")))[0]
		row, err := e.db.Send(k)
		if err != nil {
			t.Fatal(err)
		}
		c, err := e.api.CreateCheck(context.Background(), request(row))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.Doubt(k, "answer lost"); err != nil {
			t.Fatal(err)
		}
		sum := e.run(hooked(ev, Options{}))
		if sum.Plan != PlanFullWalk || !strings.Contains(sum.PlanReason, "in doubt") || sum.Resolved != 1 || sum.InDoubt != 0 {
			t.Fatalf("summary %+v", sum)
		}
		if r, _ := e.db.Row(k); r.State != payment.Submitted || r.CheckID != c.CheckID {
			t.Errorf("row in doubt: %s %s", r.State, r.CheckID)
		}
		if at, _, _ := e.db.LastSuccess(FullWalkJob); !at.Equal(e.clock.Now()) {
			t.Errorf("the full walk was not recorded: last %s", at)
		}
	})
}

// TestWebhooksUnknownEventsAreExceptions: a check created outside batchd
// is reported from its webhook events, once, with the latest status; an
// event of a check a row owns, or one older than the window, is not.
func TestWebhooksUnknownEventsAreExceptions(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		ev := &fakeEvents{}
		_, ids := settledLedger(t, e, 10, 10, ev)
		outsider := e.outside("by-hand", "9001", 4242)
		ev.add(UnknownEvent{CheckID: outsider, Name: "check.created", Status: payment.StatusInProcess, At: monday().Add(time.Minute)})
		ev.add(UnknownEvent{CheckID: outsider, Name: "check.changed", Status: payment.StatusPrinted, At: monday().Add(time.Hour)})
		ev.add(UnknownEvent{CheckID: ids[0], Name: "check.created", At: monday()}) // before submit recorded it
		ev.add(UnknownEvent{CheckID: "0d1e2f3a-0000-4000-8000-000000000001", Name: "check.created", At: monday().AddDate(0, 0, -9)})
		e.advance(1)
		sum := e.run(hooked(ev, Options{}))
		if sum.Plan != PlanFetch || sum.Calls != 0 || sum.Unknown != 1 {
			t.Fatalf("summary %+v", sum)
		}
		if got := ev.asked(); len(got) == 0 || !got[len(got)-1].Equal(dayStart(sum.Window.From)) {
			t.Errorf("events asked since %v, want the window's first day %s", got, sum.Window.From)
		}
		excs := table(t, e.reportPath("exceptions", sum.RunDate))
		if len(excs) != 1 || excs[0]["kind"] != KindUnknown || excs[0]["check_id"] != outsider || excs[0]["status"] != "printed" ||
			!strings.Contains(excs[0]["detail"], "heard of by webhook (check.changed, 2026-03-02 11:00:00 UTC)") {
			t.Fatalf("exceptions %v", excs)
		}
		// A full walk lists the check itself: reported once, as listed.
		sum, err := e.runner(nil, hooked(ev, Options{})).Run(context.Background(), sum.Window)
		if err != nil {
			t.Fatal(err)
		}
		excs = table(t, e.reportPath("exceptions", sum.RunDate))
		if sum.Plan != PlanFullWalk || sum.Unknown != 1 || len(excs) != 1 || !strings.Contains(excs[0]["detail"], "by the service's clock") {
			t.Fatalf("full walk: %+v, exceptions %v", sum, excs)
		}
	})
}

// TestWebhooksFullWalkEvery: the first run with webhooks walks in full,
// and so does the first FullWalkEvery later (give or take the hour) and
// any run over a window named by the caller, which is not recorded.
func TestWebhooksFullWalkEvery(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		ev := &fakeEvents{}
		settledLedger(t, e, 5, 5, ev) // its run was the first full walk
		first, ok, _ := e.db.LastSuccess(FullWalkJob)
		if !ok || !first.Equal(monday()) {
			t.Fatalf("first full walk recorded %s %v", first, ok)
		}
		plan := func(o Options) string {
			t.Helper()
			return e.run(hooked(ev, o)).Plan
		}
		e.advance(6)
		if p := plan(Options{}); p != PlanFetch {
			t.Errorf("after 6 days: %s", p)
		}
		e.clock.add(23 * time.Hour) // 6 days 23 hours: due within the hour
		if p := plan(Options{}); p != PlanFullWalk {
			t.Errorf("at 6 days 23 hours: %s", p)
		}
		last, _, _ := e.db.LastSuccess(FullWalkJob)
		if !last.Equal(e.clock.Now()) {
			t.Errorf("full walk recorded at %s, want %s", last, e.clock.Now())
		}
		e.clock.add(2 * 24 * time.Hour)
		if p := plan(Options{FullWalkEvery: 3 * 24 * time.Hour}); p != PlanFetch {
			t.Errorf("2 days into 3: %s", p)
		}
		if p := plan(Options{FullWalkEvery: 2 * 24 * time.Hour}); p != PlanFullWalk {
			t.Errorf("2 days into 2: %s", p)
		}
		last, _, _ = e.db.LastSuccess(FullWalkJob)
		sum, err := e.runner(nil, hooked(ev, Options{})).Run(context.Background(), Window{Date{2026, 3, 1}, Date{2026, 3, 2}})
		if err != nil || sum.Plan != PlanFullWalk || sum.PagesRead != 1 {
			t.Fatalf("explicit window: %+v %v", sum, err)
		}
		if again, _, _ := e.db.LastSuccess(FullWalkJob); !again.Equal(last) {
			t.Errorf("a walk over a given window was recorded as the full walk")
		}
	})
}

// TestWebhooksReportsMatchFullWalk: on a ledger that matches the service,
// the status and settlement reports written with webhooks, by fetching or
// by listing the open rows' dates, are byte for byte those of a full walk.
// The window (lookback 2 days) leaves Monday's open rows outside it: they
// are fetched by id either way.
func TestWebhooksReportsMatchFullWalk(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		for _, tc := range []struct {
			name  string
			open  int // of Tuesday's 12 rows
			plan  string
			calls int
		}{
			{"few open rows", 1, PlanFetch, 3},  // 2 Monday + 1 Tuesday fetched
			{"many open rows", 10, PlanWalk, 5}, // Tuesday's 3 pages, 2 Monday fetched
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnv(t, backend, monday(), nil)
				mon := e.submitBatch(e.load("mon.csv", manyPayments(6)...), 2)
				e.advance(1)
				tue := e.submitBatch(e.load("tue.csv", manyPayments(12)...), 4)
				e.advance(2) // Thursday: Monday's checks are printed, Tuesday's in process
				e.deposit(mon[2], mon[3], mon[4], mon[5])
				e.void(tue[2])
				for line := uint32(3); line < uint32(3+11-tc.open); line++ {
					e.deposit(tue[line])
				}
				o := Options{LookbackDays: 2, PageSize: 5}
				e.run(o) // the ledger catches up with the service
				full := e.run(everyRunWalks(o))
				wantStatus, wantSettlement := e.reportBytes(full.RunDate)
				ev := &fakeEvents{}
				e.fullWalked()
				sum := e.run(hooked(ev, o))
				// Each way, the calls are the minimum computed: the full
				// walk's 3 pages and 2 GETs of Monday's rows outside it.
				if sum.Plan != tc.plan || sum.Calls != tc.calls || sum.MinCalls != tc.calls || sum.StatusRows != full.StatusRows ||
					full.Calls != 5 || full.MinCalls != 5 {
					t.Fatalf("webhooks %+v\nfull walk %+v", sum, full)
				}
				status, settlement := e.reportBytes(sum.RunDate)
				if !bytes.Equal(status, wantStatus) {
					t.Errorf("status report differs:\n%s\nfull walk:\n%s", status, wantStatus)
				}
				if !bytes.Equal(settlement, wantSettlement) {
					t.Errorf("settlement report differs:\n%s\nfull walk:\n%s", settlement, wantSettlement)
				}
			})
		}
	})
}

// TestWebhooksCallsAtMost5PercentOfFullWalk: 2,000 checks, 1,980 final,
// then 20 more changes delivered by webhook. Counting requests is exact,
// so this holds on any machine.
func TestWebhooksCallsAtMost5PercentOfFullWalk(t *testing.T) {
	// The count of calls is the plan's, not the storage's: bbolt alone,
	// as 2,000 settled rows cost PostgreSQL seconds under -race.
	e := newEnv(t, ledgertest.Bbolt, monday(), nil)
	ev := &fakeEvents{}
	keys, ids := settledLedger(t, e, 2000, 1980, ev)
	e.deliver(keys[1980:], ids[1980:])
	hooks := e.run(hooked(ev, Options{}))
	full := e.run(Options{})
	if full.Plan != PlanFullWalk || full.Calls != 20 || hooks.Plan != PlanFetch || hooks.Calls*20 > full.Calls {
		t.Fatalf("webhooks %d calls (%s), full walk %d calls", hooks.Calls, hooks.Plan, full.Calls)
	}
	if hooks.StatusRows != 2000 || full.StatusRows != 2000 {
		t.Errorf("status rows: webhooks %d, full walk %d", hooks.StatusRows, full.StatusRows)
	}
}

// TestCallsCountRetries: every request counts, the retried ones too.
func TestCallsCountRetries(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		e.submitBatch(e.load("a.csv", manyPayments(7)...), 2)
		api := &faultTransport{base: http.DefaultTransport, status: http.StatusServiceUnavailable}
		sum, err := e.runner(e.serviceVia(api), Options{PageSize: 5, Retry: retry.Policy{Base: time.Millisecond, Max: 2 * time.Millisecond}}).
			Run(context.Background(), Window{})
		if err != nil {
			t.Fatal(err)
		}
		if sum.PagesRead != 2 || sum.Calls != int(api.n.Load()) || sum.Calls != 4 {
			t.Fatalf("%d calls counted, %d requests sent: %+v", sum.Calls, api.n.Load(), sum)
		}
	})
}

// TestWebhooksCheapestRanges: 1,050 checks over 21 days, all final but
// the last day's 50 and one stray 10 days old; pages of 10. The run lists
// the last day (5 pages) and fetches the stray: 6 requests, the minimum
// it computes, where one range from the stray's date to today (55 pages)
// lost to fetching all 51. Request counts are exact on any machine.
func TestWebhooksCheapestRanges(t *testing.T) {
	const (
		days, perDay, page = 21, 50, 10
		stray              = days - 1 - 10
	)
	e := newEnv(t, ledgertest.Bbolt, monday().AddDate(0, 0, -(days-1)), nil)
	ev := &fakeEvents{}
	open := spreadLedger(t, e, days, func(int) int { return perDay }, stray, ev)
	e.advance(3) // the last day's checks are printed now; no event said so
	o := Options{PageSize: page}
	counts := e.countDays()
	sum := e.run(hooked(ev, o))
	baseline := singleRangeCalls(counts, sum.Window, page)
	bound := 2*ceilDiv(perDay, page) + 1
	t.Logf("calls %d (minimum %d), bound %d, one range's plan %d: %s", sum.Calls, sum.MinCalls, bound, baseline, sum.PlanReason)
	if sum.Plan != PlanWalk || sum.MinCalls != 6 || sum.Calls*100 > sum.MinCalls*105 || sum.Calls > bound ||
		sum.Confirmed != 1 || sum.StatusChanges != perDay || !sum.Consistent {
		t.Fatalf("summary %+v", sum)
	}
	if !strings.Contains(sum.PlanReason, "listing 2026-03-02..2026-03-02 (50 rows of batchd, 5 pages) and fetching 1 by id") {
		t.Errorf("plan %q", sum.PlanReason)
	}
	if baseline != len(open) {
		t.Errorf("the single range would have cost %d requests, want %d (a GET each)", baseline, len(open))
	}
	for _, k := range open[1:] { // open[0] is the stray, printed long ago
		if r, _ := e.db.Row(k); r.CheckStatus != payment.StatusPrinted {
			t.Errorf("%s: %s, want printed", k, r.CheckStatus)
		}
	}
	full := e.run(o)
	if full.Plan != PlanFullWalk || full.MinCalls != ceilDiv(11*perDay, page) || full.Calls != full.MinCalls {
		t.Errorf("full walk of 11 days: %+v", full)
	}
}

// TestDayCounts: the ledger counted by service date: rows with a check,
// and of those the ones not final; a row without a check counts nowhere.
func TestDayCounts(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		mon := e.submitBatch(e.load("mon.csv", manyPayments(4)...), 2)
		e.advance(1)
		tue := e.load("tue.csv", manyPayments(3)...)
		k := e.keys(tue)
		e.submit(k[0])
		e.submit(k[1]) // k[2] stays pending: no check
		e.deposit(mon[2], mon[3])
		e.run(Options{}) // the ledger learns of the deposits
		got := e.countDays()
		want := []dayCount{{date: Date{2026, 3, 2}, rows: 4, open: 2}, {date: Date{2026, 3, 3}, rows: 2, open: 2}}
		if !slices.Equal(got, want) {
			t.Fatalf("counts %+v, want %+v", got, want)
		}
	})
}
