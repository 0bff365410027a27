package state

import (
	"context"
	"errors"
	boltkv "github.com/batchd/batchd/internal/state/bolt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/webhook"
	bolt "go.etcd.io/bbolt"
)

// hookClock is a settable clock, safe for Records from many goroutines.
type hookClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *hookClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *hookClock) add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// hookLedger opens a ledger in dir on a clock that starts at 2026-03-02
// 09:00 UTC.
func hookLedger(t *testing.T, dir string) (*DB, *hookClock) {
	t.Helper()
	clock := &hookClock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	d, err := Open(dir, Options{Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, clock
}

// submitted loads one payment row and gives it check id in status.
func submitted(t *testing.T, d *DB, name, id string, status payment.Status) payment.RowKey {
	t.Helper()
	b := load(t, d, name, 1)
	k := payment.RowKey{Batch: b.ID, Line: 2}
	if _, err := d.Send(k); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Created(k, payment.CheckResult{CheckID: id, Status: status}); err != nil {
		t.Fatal(err)
	}
	return k
}

// checkEvent is a check.changed event; its id tells check and status apart.
func checkEvent(check string, status payment.Status) webhook.Event {
	return webhook.Event{ID: "ev-" + check + "-" + string(status), Name: "check.changed", Kind: webhook.KindCheck,
		CheckID: check, CheckStatus: status, At: time.Date(2026, 3, 2, 8, 59, 0, 0, time.UTC)}
}

func record(t *testing.T, d *DB, e webhook.Event) (dup bool) {
	t.Helper()
	dup, err := d.Record(context.Background(), e)
	if err != nil {
		t.Fatalf("Record(%s): %v", e.ID, err)
	}
	return dup
}

func events(t *testing.T, d *DB) []EventRecord {
	t.Helper()
	var out []EventRecord
	if err := d.Events(func(e EventRecord) (bool, error) { out = append(out, e); return true, nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func outcomeOf(t *testing.T, d *DB, id string) EventOutcome {
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

func row(t *testing.T, d *DB, k payment.RowKey) *payment.Row {
	t.Helper()
	r, err := d.Row(k)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRecordDuplicateHasOneEffect(t *testing.T) {
	d, clock := hookLedger(t, t.TempDir())
	k := submitted(t, d, "a.csv", "chk-1", payment.StatusInProcess)
	e := checkEvent("chk-1", payment.StatusPrinted)
	if record(t, d, e) {
		t.Fatal("the first delivery was taken for a duplicate")
	}
	first := row(t, d, k)
	clock.add(time.Minute)
	commits := d.Commits()
	if !record(t, d, e) {
		t.Fatal("the second delivery was not a duplicate")
	}
	if n := d.Commits() - commits; n != 0 {
		t.Errorf("a duplicate cost %d commits, want none", n)
	}
	again := row(t, d, k)
	if webhookSteps(again.History) != 1 || !again.HeardAt.Equal(first.HeardAt) || len(events(t, d)) != 1 {
		t.Fatalf("a duplicate had an effect: %d steps, heard %v then %v, %d events",
			webhookSteps(again.History), first.HeardAt, again.HeardAt, len(events(t, d)))
	}
}

func TestRecordCheckEventMovesTheRow(t *testing.T) {
	d, clock := hookLedger(t, t.TempDir())
	k := submitted(t, d, "a.csv", "chk-1", payment.StatusInProcess)
	at := clock.add(time.Hour)
	record(t, d, checkEvent("chk-1", payment.StatusPrinted))
	r := row(t, d, k)
	last := r.History[len(r.History)-1]
	if r.CheckStatus != payment.StatusPrinted || !r.StatusSeenAt.Equal(at) || !r.HeardAt.Equal(at) || !r.DepositedSeenAt.IsZero() ||
		last.Note != "webhook check.changed" || last.Via != payment.Observe || last.CheckStatus != payment.StatusPrinted {
		t.Fatalf("after printed: %+v, last step %+v", r, last)
	}
	if got := payKeys(t, d.TrackedRows); len(got) != 1 {
		t.Fatalf("a printed check left the track index: %v", got)
	}
	dep := clock.add(time.Hour)
	record(t, d, checkEvent("chk-1", payment.StatusDeposited))
	r = row(t, d, k)
	if r.CheckStatus != payment.StatusDeposited || !r.DepositedSeenAt.Equal(dep) || !r.HeardAt.Equal(dep) || webhookSteps(r.History) != 2 {
		t.Fatalf("after deposited: %+v", r)
	}
	if got := payKeys(t, d.TrackedRows); len(got) != 0 {
		t.Fatalf("a deposited check is still tracked: %v", got)
	}
	for _, id := range []string{"ev-chk-1-printed", "ev-chk-1-deposited"} {
		if o := outcomeOf(t, d, id); o != EventApplied {
			t.Errorf("%s: outcome %s, want applied", id, o)
		}
	}
	wantInvariants(t, d)
}

func TestRecordNeverUndoesANewerStatus(t *testing.T) {
	d, clock := hookLedger(t, t.TempDir())
	k := submitted(t, d, "a.csv", "chk-1", payment.StatusInProcess)
	record(t, d, checkEvent("chk-1", payment.StatusDeposited))
	steps := len(row(t, d, k).History)
	// Late, reordered and odd deliveries: none moves the row, each is heard.
	for _, s := range []payment.Status{payment.StatusPrinted, payment.StatusInReview, payment.StatusVoid, "", "processed"} {
		at := clock.add(time.Minute)
		e := checkEvent("chk-1", s)
		record(t, d, e)
		r := row(t, d, k)
		if r.CheckStatus != payment.StatusDeposited || len(r.History) != steps || !r.HeardAt.Equal(at) {
			t.Fatalf("%q after deposited: status %s, %d steps (want %d), heard %v", s, r.CheckStatus, len(r.History), steps, r.HeardAt)
		}
		if o := outcomeOf(t, d, e.ID); o != EventUnchanged {
			t.Errorf("%q after deposited: outcome %s, want unchanged", s, o)
		}
	}
	// Before a final status too, a delivery overtaken by a newer one is
	// not applied.
	k2 := submitted(t, d, "b.csv", "chk-2", payment.StatusInProcess)
	record(t, d, checkEvent("chk-2", payment.StatusPrinted))
	record(t, d, checkEvent("chk-2", payment.StatusInReview))
	if r := row(t, d, k2); r.CheckStatus != payment.StatusPrinted || webhookSteps(r.History) != 1 {
		t.Fatalf("in_review after printed: %s, %d webhook steps", r.CheckStatus, webhookSteps(r.History))
	}
	wantInvariants(t, d)
}

func TestRecordUnknownAndIgnoredEvents(t *testing.T) {
	d, clock := hookLedger(t, t.TempDir())
	start := clock.now()
	b := load(t, d, "a.csv", 1)
	doubt := payment.RowKey{Batch: b.ID, Line: 2}
	d.Send(doubt)
	d.Doubt(doubt, "timeout") // its check, if made, is not on record yet
	record(t, d, checkEvent("not-ours", payment.StatusPrinted))
	later := clock.add(time.Hour)
	record(t, d, checkEvent("chk-of-a-row-in-doubt", payment.StatusInProcess))
	record(t, d, webhook.Event{ID: "ev-user", Name: "user.created", Kind: webhook.KindOther, UserID: "u-1"})
	record(t, d, webhook.Event{ID: "ev-no-check", Name: "check.changed", Kind: webhook.KindCheck, CheckStatus: payment.StatusPrinted})
	record(t, d, webhook.Event{ID: "ev-no-source", Name: "funding-source.verified", Kind: webhook.KindSource, SourceStatus: funding.StatusVerified})

	want := map[string]EventOutcome{"ev-not-ours-printed": EventUnknown, "ev-chk-of-a-row-in-doubt-in_process": EventUnknown,
		"ev-user": EventIgnored, "ev-no-check": EventIgnored, "ev-no-source": EventIgnored}
	for id, o := range want {
		if got := outcomeOf(t, d, id); got != o {
			t.Errorf("%s: outcome %s, want %s", id, got, o)
		}
	}
	if r := row(t, d, doubt); r.State != payment.InDoubt || !r.HeardAt.IsZero() {
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
	wantInvariants(t, d)
}

func TestRecordSourceEvent(t *testing.T) {
	d, clock := hookLedger(t, t.TempDir())
	sb := loadSources(t, d, "src.csv", payment.KindSources, srcReq(1))
	k := payment.RowKey{Batch: sb.ID, Line: 2}
	submitSource(t, d, k, "src-1", funding.StatusPending)
	at := clock.add(time.Hour)
	verified := webhook.Event{ID: "ev-verified", Name: "funding-source.verified", Kind: webhook.KindSource,
		SourceID: "src-1", SourceStatus: funding.StatusVerified, UserID: "u-1"}
	record(t, d, verified)
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
	heard := clock.add(time.Minute)
	record(t, d, webhook.Event{ID: "ev-added", Name: "funding-source.added", Kind: webhook.KindSource,
		SourceID: "src-1", SourceStatus: funding.StatusPending})
	if after, _ := d.SourceRow(k); after.Status != funding.StatusVerified || !after.HeardAt.Equal(heard) || len(after.History) != len(r.History) {
		t.Fatalf("after a late pending: %+v", after)
	}
	record(t, d, webhook.Event{ID: "ev-other", Name: "funding-source.verified", Kind: webhook.KindSource,
		SourceID: "src-not-ours", SourceStatus: funding.StatusVerified})
	for id, o := range map[string]EventOutcome{"ev-verified": EventApplied, "ev-added": EventUnchanged, "ev-other": EventUnknown} {
		if got := outcomeOf(t, d, id); got != o {
			t.Errorf("%s: outcome %s, want %s", id, got, o)
		}
	}
	if e := events(t, d)[0]; e.SourceID != "src-1" || e.Status != "verified" || e.UserID != "u-1" || e.Kind != webhook.KindSource {
		t.Errorf("source event recorded as %+v", e)
	}
	wantInvariants(t, d)
}

// TestRecordConcurrentlyOnce: the service may deliver one event on many
// connections at once; exactly one Record applies it.
func TestRecordConcurrentlyOnce(t *testing.T) {
	d, _ := hookLedger(t, t.TempDir())
	k := submitted(t, d, "a.csv", "chk-1", payment.StatusInProcess)
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
	if r := row(t, d, k); webhookSteps(r.History) != 1 || r.CheckStatus != payment.StatusPrinted {
		t.Fatalf("row after 8 concurrent deliveries: %d webhook steps, %s", webhookSteps(r.History), r.CheckStatus)
	}
	if n := len(events(t, d)); n != 1 {
		t.Fatalf("%d event records, want 1", n)
	}
}

func TestRecordLedgerFailure(t *testing.T) {
	dir := t.TempDir()
	d, _ := hookLedger(t, dir)
	k := submitted(t, d, "a.csv", "chk-1", payment.StatusInProcess)
	e := checkEvent("chk-1", payment.StatusPrinted)

	// A failure inside the transaction, after the row moved: nothing stays.
	testHookRecordTx = func(webhook.Event) error { return errors.New("disk went away") }
	_, err := d.Record(context.Background(), e)
	testHookRecordTx = nil
	if !errors.Is(err, payment.ErrLedger) || !strings.Contains(err.Error(), "disk went away") {
		t.Fatalf("Record with a failing commit = %v, want a ledger error", err)
	}
	if r := row(t, d, k); r.CheckStatus != payment.StatusInProcess || !r.HeardAt.IsZero() || len(events(t, d)) != 0 {
		t.Fatalf("a failed Record left an effect: %+v, %d events", r, len(events(t, d)))
	}
	// The service delivers it again, and now it is applied, not a duplicate.
	if record(t, d, e) || row(t, d, k).CheckStatus != payment.StatusPrinted {
		t.Fatal("the redelivery after a failure was not applied")
	}

	// A ledger that cannot be written.
	d.Close()
	ro, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	readOnly := &DB{store: boltkv.New(ro), bolt: ro, path: filepath.Join(dir, FileName), now: time.Now}
	_, err = readOnly.Record(context.Background(), checkEvent("chk-1", payment.StatusDeposited))
	var le *payment.LedgerError
	if !errors.Is(err, payment.ErrLedger) || !errors.As(err, &le) || le.Op != "write" {
		t.Fatalf("Record on a read-only ledger = %v, want a write failure wrapping ErrLedger", err)
	}
	// A closed one.
	if _, err := d.Record(context.Background(), checkEvent("chk-1", payment.StatusDeposited)); !errors.Is(err, payment.ErrLedger) {
		t.Fatalf("Record on a closed ledger = %v, want ErrLedger", err)
	}
	// A caller that gave up: nothing is written, and it is no ledger failure.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readOnly.Record(ctx, e); !errors.Is(err, context.Canceled) || errors.Is(err, payment.ErrLedger) {
		t.Fatalf("Record with a done context = %v", err)
	}
}
