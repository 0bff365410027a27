package statetest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/webhook"
)

// Webhook events: recorded once by id, applied in the same transaction.
var eventCases = []testCase{
	{"DuplicateHasOneEffect", testRecordDuplicateHasOneEffect},
	{"CheckEventMovesTheRow", testRecordCheckEventMovesTheRow},
	{"NeverUndoesANewerStatus", testRecordNeverUndoesANewerStatus},
	{"UnknownAndIgnored", testRecordUnknownAndIgnoredEvents},
	{"SourceEvent", testRecordSourceEvent},
	{"ConcurrentlyOnce", testRecordConcurrentlyOnce},
	{"SurviveReopenAndRestore", testEventsSurviveReopenAndRestore},
	{"PruneEvents", testPruneEvents},
	{"CountedByCheck", testEventsCountedByCheck},
}

// checkEvent is a check.changed event; its id tells check and status apart.
func checkEvent(check string, status payment.Status) webhook.Event {
	return webhook.Event{ID: "ev-" + check + "-" + string(status), Name: "check.changed", Kind: webhook.KindCheck,
		CheckID: check, CheckStatus: status, At: time.Date(2026, 3, 2, 8, 59, 0, 0, time.UTC)}
}

func record(t *testing.T, d *state.DB, e webhook.Event) (dup bool) {
	t.Helper()
	dup, err := d.Record(context.Background(), e)
	if err != nil {
		t.Fatalf("Record(%s): %v", e.ID, err)
	}
	return dup
}

func events(t *testing.T, d *state.DB) []state.EventRecord {
	t.Helper()
	var out []state.EventRecord
	if err := d.Events(func(e state.EventRecord) (bool, error) { out = append(out, e); return true, nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func outcomeOf(t *testing.T, d *state.DB, id string) state.EventOutcome {
	t.Helper()
	for _, e := range events(t, d) {
		if e.ID == id {
			return e.Outcome
		}
	}
	t.Fatalf("event %s not recorded", id)
	return ""
}

// webhookSteps counts the history steps events made.
func webhookSteps(r []payment.Step) int {
	n := 0
	for _, s := range r {
		if strings.HasPrefix(s.Note, "webhook ") {
			n++
		}
	}
	return n
}

func testRecordDuplicateHasOneEffect(t *testing.T, be Backend) {
	d := open(t, be)
	k := submitted(t, d.DB, "a.csv", "chk-1", payment.StatusInProcess)
	e := checkEvent("chk-1", payment.StatusPrinted)
	if record(t, d.DB, e) {
		t.Fatal("the first delivery was taken for a duplicate")
	}
	first := row(t, d.DB, k)
	d.clock.Add(time.Minute)
	commits := d.Commits()
	if !record(t, d.DB, e) {
		t.Fatal("the second delivery was not a duplicate")
	}
	if n := d.Commits() - commits; n != 0 {
		t.Errorf("a duplicate cost %d commits, want none", n)
	}
	again := row(t, d.DB, k)
	if webhookSteps(again.History) != 1 || !again.HeardAt.Equal(first.HeardAt) || len(events(t, d.DB)) != 1 {
		t.Fatalf("a duplicate had an effect: %d steps, heard %v then %v, %d events",
			webhookSteps(again.History), first.HeardAt, again.HeardAt, len(events(t, d.DB)))
	}
}

func testRecordCheckEventMovesTheRow(t *testing.T, be Backend) {
	d := open(t, be)
	k := submitted(t, d.DB, "a.csv", "chk-1", payment.StatusInProcess)
	at := d.clock.Add(time.Hour)
	record(t, d.DB, checkEvent("chk-1", payment.StatusPrinted))
	r := row(t, d.DB, k)
	last := r.History[len(r.History)-1]
	if r.CheckStatus != payment.StatusPrinted || !r.StatusSeenAt.Equal(at) || !r.HeardAt.Equal(at) || !r.DepositedSeenAt.IsZero() ||
		last.Note != "webhook check.changed" || last.Via != payment.Observe || last.CheckStatus != payment.StatusPrinted {
		t.Fatalf("after printed: %+v, last step %+v", r, last)
	}
	if got := payKeys(t, d.TrackedRows); len(got) != 1 {
		t.Fatalf("a printed check left the track index: %v", got)
	}
	dep := d.clock.Add(time.Hour)
	record(t, d.DB, checkEvent("chk-1", payment.StatusDeposited))
	r = row(t, d.DB, k)
	if r.CheckStatus != payment.StatusDeposited || !r.DepositedSeenAt.Equal(dep) || !r.HeardAt.Equal(dep) || webhookSteps(r.History) != 2 {
		t.Fatalf("after deposited: %+v", r)
	}
	if got := payKeys(t, d.TrackedRows); len(got) != 0 {
		t.Fatalf("a deposited check is still tracked: %v", got)
	}
	for _, id := range []string{"ev-chk-1-printed", "ev-chk-1-deposited"} {
		if o := outcomeOf(t, d.DB, id); o != state.EventApplied {
			t.Errorf("%s: outcome %s, want applied", id, o)
		}
	}
	d.invariants()
}

func testRecordNeverUndoesANewerStatus(t *testing.T, be Backend) {
	d := open(t, be)
	k := submitted(t, d.DB, "a.csv", "chk-1", payment.StatusInProcess)
	record(t, d.DB, checkEvent("chk-1", payment.StatusDeposited))
	steps := len(row(t, d.DB, k).History)
	// Late, reordered and odd deliveries: none moves the row, each is heard.
	for _, s := range []payment.Status{payment.StatusPrinted, payment.StatusInReview, payment.StatusVoid, "", "processed"} {
		at := d.clock.Add(time.Minute)
		e := checkEvent("chk-1", s)
		record(t, d.DB, e)
		r := row(t, d.DB, k)
		if r.CheckStatus != payment.StatusDeposited || len(r.History) != steps || !r.HeardAt.Equal(at) {
			t.Fatalf("%q after deposited: status %s, %d steps (want %d), heard %v", s, r.CheckStatus, len(r.History), steps, r.HeardAt)
		}
		if o := outcomeOf(t, d.DB, e.ID); o != state.EventUnchanged {
			t.Errorf("%q after deposited: outcome %s, want unchanged", s, o)
		}
	}
	// Before a final status too, a delivery overtaken by a newer one is
	// not applied.
	k2 := submitted(t, d.DB, "b.csv", "chk-2", payment.StatusInProcess)
	record(t, d.DB, checkEvent("chk-2", payment.StatusPrinted))
	record(t, d.DB, checkEvent("chk-2", payment.StatusInReview))
	if r := row(t, d.DB, k2); r.CheckStatus != payment.StatusPrinted || webhookSteps(r.History) != 1 {
		t.Fatalf("in_review after printed: %s, %d webhook steps", r.CheckStatus, webhookSteps(r.History))
	}
	d.invariants()
}

func testRecordUnknownAndIgnoredEvents(t *testing.T, be Backend) {
	d := open(t, be)
	start := d.clock.Now()
	b := load(t, d.DB, "a.csv", 1)
	doubt := payment.RowKey{Batch: b.ID, Line: 2}
	d.Send(doubt)
	d.Doubt(doubt, "timeout") // its check, if made, is not on record yet
	record(t, d.DB, checkEvent("not-ours", payment.StatusPrinted))
	later := d.clock.Add(time.Hour)
	record(t, d.DB, checkEvent("chk-of-a-row-in-doubt", payment.StatusInProcess))
	record(t, d.DB, webhook.Event{ID: "ev-user", Name: "user.created", Kind: webhook.KindOther, UserID: "u-1"})
	record(t, d.DB, webhook.Event{ID: "ev-no-check", Name: "check.changed", Kind: webhook.KindCheck, CheckStatus: payment.StatusPrinted})
	record(t, d.DB, webhook.Event{ID: "ev-no-source", Name: "funding-source.verified", Kind: webhook.KindSource, SourceStatus: funding.StatusVerified})

	want := map[string]state.EventOutcome{"ev-not-ours-printed": state.EventUnknown, "ev-chk-of-a-row-in-doubt-in_process": state.EventUnknown,
		"ev-user": state.EventIgnored, "ev-no-check": state.EventIgnored, "ev-no-source": state.EventIgnored}
	for id, o := range want {
		if got := outcomeOf(t, d.DB, id); got != o {
			t.Errorf("%s: outcome %s, want %s", id, got, o)
		}
	}
	if r := row(t, d.DB, doubt); r.State != payment.InDoubt || !r.HeardAt.IsZero() {
		t.Fatalf("the row in doubt was touched: %+v", r)
	}
	unknown, err := d.UnknownEvents(start)
	if err != nil || len(unknown) != 2 || unknown[0].CheckID != "not-ours" || unknown[1].CheckID != "chk-of-a-row-in-doubt" {
		t.Fatalf("UnknownEvents(start) = %+v, %v", unknown, err)
	}
	if u := unknown[0]; u.Name != "check.changed" || u.Status != "printed" || !u.Received.Equal(start) || u.Kind != webhook.KindCheck ||
		!u.At.Equal(time.Date(2026, 3, 2, 8, 59, 0, 0, time.UTC)) {
		t.Errorf("unknown event recorded as %+v", u)
	}
	if since, err := d.UnknownEvents(later); err != nil || len(since) != 1 || since[0].CheckID != "chk-of-a-row-in-doubt" {
		t.Fatalf("UnknownEvents(later) = %+v, %v", since, err)
	}
	d.invariants()
}

func testRecordSourceEvent(t *testing.T, be Backend) {
	d := open(t, be)
	sb := loadSources(t, d.DB, "src.csv", payment.KindSources, srcReq(1))
	k := payment.RowKey{Batch: sb.ID, Line: 2}
	submitSource(t, d.DB, k, "src-1", funding.StatusPending)
	at := d.clock.Add(time.Hour)
	verified := webhook.Event{ID: "ev-verified", Name: "funding-source.verified", Kind: webhook.KindSource,
		SourceID: "src-1", SourceStatus: funding.StatusVerified, UserID: "u-1"}
	record(t, d.DB, verified)
	r, err := d.SourceRow(k)
	if err != nil {
		t.Fatal(err)
	}
	last := r.History[len(r.History)-1]
	if r.Status != funding.StatusVerified || !r.StatusSeenAt.Equal(at) || !r.HeardAt.Equal(at) ||
		last.Note != "webhook funding-source.verified" || last.Via != payment.Observe {
		t.Fatalf("after verified: %+v, last step %+v", r, last)
	}
	if got := srcKeys(t, d.TrackedSourceRows); len(got) != 0 {
		t.Fatalf("a verified source is still tracked: %v", got)
	}
	// A late "added" (pending) does not bring it back; it is heard.
	heard := d.clock.Add(time.Minute)
	record(t, d.DB, webhook.Event{ID: "ev-added", Name: "funding-source.added", Kind: webhook.KindSource,
		SourceID: "src-1", SourceStatus: funding.StatusPending})
	if after, _ := d.SourceRow(k); after.Status != funding.StatusVerified || !after.HeardAt.Equal(heard) || len(after.History) != len(r.History) {
		t.Fatalf("after a late pending: %+v", after)
	}
	record(t, d.DB, webhook.Event{ID: "ev-other", Name: "funding-source.verified", Kind: webhook.KindSource,
		SourceID: "src-not-ours", SourceStatus: funding.StatusVerified})
	for id, o := range map[string]state.EventOutcome{"ev-verified": state.EventApplied, "ev-added": state.EventUnchanged, "ev-other": state.EventUnknown} {
		if got := outcomeOf(t, d.DB, id); got != o {
			t.Errorf("%s: outcome %s, want %s", id, got, o)
		}
	}
	if e := events(t, d.DB)[0]; e.SourceID != "src-1" || e.Status != "verified" || e.UserID != "u-1" || e.Kind != webhook.KindSource {
		t.Errorf("source event recorded as %+v", e)
	}
	d.invariants()
}

// testRecordConcurrentlyOnce: the service may deliver one event on many
// connections at once; exactly one Record applies it.
func testRecordConcurrentlyOnce(t *testing.T, be Backend) {
	d := open(t, be)
	k := submitted(t, d.DB, "a.csv", "chk-1", payment.StatusInProcess)
	e := checkEvent("chk-1", payment.StatusPrinted)
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		mu    sync.Mutex
		fresh int
		errs  []error
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			dup, err := d.Record(context.Background(), e)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else if !dup {
				fresh++
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 || fresh != 1 {
		t.Fatalf("%d of 8 Records applied the event (want 1); errors %v", fresh, errs)
	}
	if r := row(t, d.DB, k); webhookSteps(r.History) != 1 || r.CheckStatus != payment.StatusPrinted {
		t.Fatalf("row after 8 concurrent deliveries: %d webhook steps, %s", webhookSteps(r.History), r.CheckStatus)
	}
	if n := len(events(t, d.DB)); n != 1 {
		t.Fatalf("%d event records, want 1", n)
	}
}

// submitted loads one payment row and gives it check id in status.
func submitted(t *testing.T, d *state.DB, name, id string, status payment.Status) payment.RowKey {
	t.Helper()
	b := load(t, d, name, 1)
	k := key(b, 2)
	submit(t, d, k, id, status)
	return k
}

// testEventsSurviveReopenAndRestore: the dedupe memory is in the ledger,
// and in its snapshots.
func testEventsSurviveReopenAndRestore(t *testing.T, be Backend) {
	needRestore(t, be)
	d := open(t, be)
	submitted(t, d.DB, "a.csv", "chk-1", payment.StatusInProcess)
	e := checkEvent("chk-1", payment.StatusPrinted)
	record(t, d.DB, e)
	d.restore(func() {
		d.reopen()
		if !record(t, d.DB, e) {
			t.Fatal("after a reopen the event was recorded again")
		}
	}, d.clock.Add(time.Hour))
	if !record(t, d.DB, e) {
		t.Fatal("after a restore the event was recorded again")
	}
	if rep := d.invariants(); rep.Events != 1 {
		t.Errorf("the restored ledger's check counts %d events, want 1", rep.Events)
	}
}

func testPruneEvents(t *testing.T, be Backend) {
	d := open(t, be)
	submitted(t, d.DB, "a.csv", "chk-1", payment.StatusInProcess)
	start := d.clock.Now()
	statuses := []payment.Status{payment.StatusInReview, payment.StatusPrinted, payment.StatusDeposited, payment.StatusVoid, payment.StatusDeleted}
	for _, s := range statuses {
		record(t, d.DB, checkEvent("chk-1", s))
		d.clock.Add(time.Hour)
	}
	if n, err := d.PruneEvents(time.Time{}); n != 0 || err != nil {
		t.Fatalf("PruneEvents(zero) = %d, %v", n, err)
	}
	n, err := d.PruneEvents(start.Add(3 * time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("PruneEvents = %d, %v; want 3", n, err)
	}
	left := events(t, d.DB)
	if len(left) != 2 || left[0].Status != "void" || left[1].Status != "deleted" {
		t.Fatalf("events left: %+v", left)
	}
	// A pruned event delivered again is recorded anew, and changes nothing.
	if record(t, d.DB, checkEvent("chk-1", payment.StatusPrinted)) {
		t.Fatal("a pruned event is still remembered")
	}
	if o := outcomeOf(t, d.DB, "ev-chk-1-printed"); o != state.EventUnchanged {
		t.Fatalf("a pruned event delivered again: %s, want unchanged", o)
	}
	if n, err := d.PruneEvents(d.clock.Add(time.Hour)); n != 3 || err != nil || len(events(t, d.DB)) != 0 {
		t.Fatalf("PruneEvents(all) = %d, %v", n, err)
	}
	d.invariants()
}

// testEventsCountedByCheck: `batchd check` counts the events kept.
func testEventsCountedByCheck(t *testing.T, be Backend) {
	d := open(t, be)
	submitted(t, d.DB, "a.csv", "chk-1", payment.StatusInProcess)
	if rep := d.invariants(); rep.Events != 0 {
		t.Fatalf("a ledger without events counts %d", rep.Events)
	}
	record(t, d.DB, checkEvent("chk-1", payment.StatusPrinted))
	record(t, d.DB, checkEvent("other", payment.StatusPrinted))
	if rep := d.invariants(); rep.Events != 2 {
		t.Fatalf("a ledger with two events counts %d", rep.Events)
	}
}
