package reconcile

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/money"
)

// TestListedDatesAreNotListedAgain: without webhooks, one stuck check ten
// days old no longer makes every run walk the ten days since. 21 days of
// 50 checks, pages of 10; the first run walks the whole window and
// records its listing. The next day a check is made outside batchd. The
// run lists only the dates since the last listing (with a day of slack):
// the day before yesterday, yesterday and today, which hold 100 checks of
// batchd and the outside one, and fetches the stuck check by id: 12
// requests where a walk of the window, from the stuck check's date, takes
// 56. The outside check is reported all the same. A week after the first full
// walk, a run walks the whole window again.
func TestListedDatesAreNotListedAgain(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		const days, perDay, page, stray = 21, 50, 10, 10
		e := newEnv(t, backend, monday(), nil)
		var final []string
		for d := range days {
			batch := e.load(fmt.Sprintf("day-%d.csv", d), manyPayments(perDay)...)
			byLine, first := e.submitBatch(batch, 16), e.keys(batch)[0].Line
			for line, id := range byLine {
				if d < days-1 && !(d == stray && line == first) {
					final = append(final, id)
				}
			}
			if d < days-1 {
				e.advance(1)
			}
		}
		e.deposit(final...)
		o := Options{PageSize: page}
		first := e.run(o)
		if first.Plan != PlanFullWalk || first.PlanReason != "no full walk recorded yet" || first.Matched != days*perDay {
			t.Fatalf("first run: %+v", first)
		}

		e.advance(1)
		e.outside("OUT-1", "9001", money.Cents(4200))
		sum := e.run(o)
		t.Logf("calls %d (minimum %d): %s", sum.Calls, sum.MinCalls, sum.PlanReason)
		today := DateOf(e.clock.Now())
		must := Window{From: today.AddDays(-2), To: today}
		if sum.Plan != PlanWalk || sum.MinCalls != 11 || sum.Calls != 12 || sum.Confirmed != 1 ||
			sum.Unknown != 1 || !sum.Consistent || sum.Window.From != today.AddDays(-(days-stray)) {
			t.Fatalf("next day: %+v", sum)
		}
		if !strings.Contains(sum.PlanReason, "listing "+must.String()+" (100 rows of batchd, 10 pages) and fetching 1 by id") {
			t.Errorf("plan %q", sum.PlanReason)
		}
		full, err := e.runner(nil, o).Run(context.Background(), sum.Window) // a named window: walked, not recorded
		if err != nil || full.Plan != PlanFullWalk || full.Calls != 56 || full.Unknown != 1 {
			t.Fatalf("the same window walked: %+v %v", full, err)
		}
		if at, _, _ := e.db.LastSuccess(ListedJob); !at.Equal(e.clock.Now()) {
			t.Errorf("listing recorded at %s, want %s", at, e.clock.Now())
		}
		if at, _, _ := e.db.LastSuccess(FullWalkJob); !at.Equal(monday().AddDate(0, 0, days-1)) {
			t.Errorf("full walk recorded at %s: a walk of part of the window is not a full walk", at)
		}

		e.clock.add(6 * 24 * time.Hour)
		if again := e.run(o); again.Plan != PlanFullWalk || !strings.HasPrefix(again.PlanReason, "the last full walk started") {
			t.Errorf("a week after the full walk: %+v", again)
		}
	})
}

// TestListingIsForgottenWhenDatedAfterNow: a listing recorded after now
// (a clock set back) proves nothing; the run walks in full.
func TestListingIsForgottenWhenDatedAfterNow(t *testing.T) {
	e := newEnv(t, ledgertest.Bbolt, monday(), nil)
	e.submitBatch(e.load("a.csv", manyPayments(3)...), 2)
	e.fullWalked()
	if err := e.db.RecordSuccess(ListedJob, e.clock.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	sum := e.run(Options{})
	if sum.Plan != PlanFullWalk || !strings.HasPrefix(sum.PlanReason, "the last listing of the recent dates is dated") {
		t.Fatalf("summary %+v", sum)
	}
}

// TestMustListFoldsTheLastDates: the counts from must's first date on
// become one count that stands for every date to its last; those before
// stay as they were.
func TestMustListFoldsTheLastDates(t *testing.T) {
	d := func(day, rows, open int) dayCount {
		return dayCount{date: Date{2026, 3, day}, rows: rows, open: open}
	}
	in := []dayCount{d(1, 5, 1), d(4, 7, 0), d(6, 3, 3)}
	got := mustList(in, Window{From: Date{2026, 3, 3}, To: Date{2026, 3, 9}})
	want := []dayCount{d(1, 5, 1), {date: Date{2026, 3, 3}, until: Date{2026, 3, 9}, rows: 10, open: 3}}
	if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(in[1]) != fmt.Sprint(d(4, 7, 0)) {
		t.Fatalf("got %+v, want %+v (input %+v)", got, want, in)
	}
	if empty := mustList(in[:1], Window{From: Date{2026, 3, 8}, To: Date{2026, 3, 9}}); len(empty) != 2 || empty[1].rows != 0 {
		t.Fatalf("must with no rows: %+v", empty)
	}
	// A forced count is listed even when fetching its open rows is cheaper.
	p := cheapestRanges(mustList([]dayCount{d(1, 500, 1), d(2, 500, 1)}, Window{From: Date{2026, 3, 2}, To: Date{2026, 3, 3}}), 100, 0)
	if len(p.ranges) != 1 || p.ranges[0] != (Window{From: Date{2026, 3, 2}, To: Date{2026, 3, 3}}) || p.gets != 1 || p.pages != 5 {
		t.Fatalf("plan %+v", p)
	}
}

// TestDailyRunWalksItsWindow: run every day with nothing stuck, the
// window (yesterday and today) holds only dates since the last listing:
// it is walked whole, without first counting the ledger's rows by date.
func TestDailyRunWalksItsWindow(t *testing.T) {
	e := newEnv(t, ledgertest.Bbolt, monday(), nil)
	ids := e.submitBatch(e.load("a.csv", manyPayments(3)...), 2)
	if first := e.run(Options{}); first.Plan != PlanFullWalk {
		t.Fatalf("first run: %+v", first)
	}
	e.advance(1)
	for _, id := range ids {
		e.deposit(id)
	}
	sum := e.run(Options{})
	if sum.Plan != PlanFullWalk || sum.PlanReason != "every date of the window is since the last listing" ||
		sum.Window.From != DateOf(monday()) || sum.StatusChanges != 3 || sum.Calls != 1 {
		t.Fatalf("next day: %+v", sum)
	}
}

// TestListingCatchesUpAfterAnOutage: without webhooks, when no run listed
// the last days (batchd was stopped), the next run lists every date since
// the last listing, not only yesterday and today: a check made elsewhere
// on a day no run saw is still reported.
func TestListingCatchesUpAfterAnOutage(t *testing.T) {
	e := newEnv(t, ledgertest.Bbolt, monday(), nil)
	ids := e.submitBatch(e.load("a.csv", manyPayments(3)...), 2)
	if first := e.run(Options{}); first.Plan != PlanFullWalk {
		t.Fatalf("first run: %+v", first)
	}
	for _, id := range ids {
		e.deposit(id)
	}
	e.advance(2)
	e.outside("OUT-1", "9001", money.Cents(4200)) // Wednesday: no run
	e.advance(3)
	sum := e.run(Options{})
	if sum.Window.From != DateOf(monday()) || sum.Plan != PlanFullWalk || sum.Unknown != 1 || sum.StatusChanges != 3 {
		t.Fatalf("after five days without a run: %+v", sum)
	}
	// With a listing since, the window is the usual one again.
	e.advance(1)
	if next := e.run(Options{}); next.Window.From != DateOf(e.clock.Now()).AddDays(-1) {
		t.Errorf("the day after: window %s", next.Window)
	}
}
