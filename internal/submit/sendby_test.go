package submit

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/resolve"
	"github.com/batchd/batchd/internal/rowrun"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/state"
)

// sendWindow is the send-by window of the ledgers below, as a shared
// ledger under a leader lease would set it.
const sendWindow = 10 * time.Second

// stallingLedger is the real ledger, but that batchd's clock jumps ahead
// by pause right after the intent of row at is committed, before its
// request can leave: the process was stopped (SIGSTOP, a VM pause) or the
// commit stalled, and another instance may have taken the lead meanwhile.
type stallingLedger struct {
	*state.DB
	clock *clocktest.Clock
	at    payment.RowKey
	pause time.Duration
	then  func() // optional: what else happened during the pause
	once  sync.Once
}

func (l *stallingLedger) Send(k payment.RowKey) (*payment.Row, error) {
	row, err := l.DB.Send(k)
	if err == nil && k == l.at {
		l.once.Do(func() {
			l.clock.Advance(l.pause)
			if l.then != nil {
				l.then()
			}
		})
	}
	return row, err
}

// sendByRig is a rig whose ledger sets send-by deadlines, with the ledger,
// the sandbox and submit on one test clock.
func sendByRig(t *testing.T, backend string) (*rig, *clocktest.Clock) {
	t.Helper()
	clock := clocktest.New(clocktest.Monday)
	r := newRigOpts(t, backend, sandbox.Options{Now: clock.Now}, testKey, state.Options{Now: clock.Now, SendWindow: sendWindow})
	return r, clock
}

type runResult struct {
	sum Summary
	err error
}

// start runs run in the background.
func start(ctx context.Context, run *Runner) <-chan runResult {
	done := make(chan runResult, 1)
	go func() {
		sum, err := run.Run(ctx)
		done <- runResult{sum, err}
	}()
	return done
}

// await returns the run's result, failing the test when it has not ended
// within a generous deadline.
func await(t *testing.T, done <-chan runResult) runResult {
	t.Helper()
	select {
	case res := <-done:
		return res
	case <-time.After(30 * time.Second):
		t.Fatal("the submit run did not end")
		return runResult{}
	}
}

// eventually polls cond until it holds, failing the test after a deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// stateOf reads one row's state from the ledger.
func (r *rig) stateOf(k payment.RowKey) payment.RowState {
	r.t.Helper()
	row, err := r.db.Row(k)
	if err != nil {
		r.t.Fatal(err)
	}
	return row.State
}

// A row whose send-by deadline has passed when its request is about to
// leave is not sent: the sandbox receives no create for it, it goes in
// doubt with the reason, and the drop is counted. After its deadline and
// the margin, a later run looks it up, finds no check, and sends it: one
// check, exactly.
func TestLateSendIsDroppedThenResolved(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r, clock := sendByRig(t, backend)
		b := r.load("late.csv", payments(3)...)
		rows := r.rows(b.ID)
		late := rows[1]
		led := &stallingLedger{DB: r.db, clock: clock, at: late.Key, pause: sendWindow + time.Second}
		var dropped atomic.Int64
		opts := Options{Concurrency: 1, Retry: fast(), Now: clock.Now, ResolveAfter: time.Millisecond,
			OnSendDropped: func(n int) { dropped.Add(int64(n)) }}

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := start(ctx, New(led, r.svc, opts))
		eventually(t, "the late row in doubt and the others submitted", func() bool {
			return r.stateOf(late.Key) == payment.InDoubt &&
				r.stateOf(rows[0].Key) == payment.Submitted && r.stateOf(rows[2].Key) == payment.Submitted
		})
		cancel() // the run is waiting for the deadline: stop it there
		res := await(t, done)
		if !errors.Is(res.err, context.Canceled) {
			t.Fatalf("first run: %v, want context.Canceled", res.err)
		}
		if s := res.sum; s.Dropped != 1 || s.Attempts != 2 || s.Created != 2 || s.InDoubt != 1 || dropped.Load() != 1 {
			t.Fatalf("first run: summary %+v, OnSendDropped told of %d; want 1 dropped, 2 sent and created, 1 in doubt", s, dropped.Load())
		}
		if got, want := r.log.creates(), []string{rows[0].Number, rows[2].Number}; !slices.Equal(got, want) {
			t.Fatalf("creates received by the sandbox: %q, want %q (none for the late row)", got, want)
		}
		row, err := r.db.Row(late.Key)
		if err != nil {
			t.Fatal(err)
		}
		last := row.History[len(row.History)-1]
		if last.Via != payment.Doubt || last.Note != rowrun.DropReason || row.Error != rowrun.DropReason {
			t.Fatalf("late row's last step %+v, error %q; want a doubt for %q", last, row.Error, rowrun.DropReason)
		}
		if r.log.count("GET", "/v1/check/list") != 0 {
			t.Fatal("the late row was looked up before its deadline and margin passed")
		}

		clock.Set(row.SendBy.Add(resolve.DefaultSendMargin))
		res = await(t, start(context.Background(), New(r.db, r.svc, opts)))
		if res.err != nil {
			t.Fatalf("second run: %v", res.err)
		}
		if s := res.sum; s.Resent != 1 || s.Attempts != 1 || s.Created != 1 || s.Dropped != 0 || s.InDoubt != 0 {
			t.Fatalf("second run: summary %+v; want the late row looked up, released and sent once", s)
		}
		if n := slices.Index(r.log.creates(), late.Number); n < 0 || slices.Contains(r.log.creates()[n+1:], late.Number) {
			t.Fatalf("creates %q: want the late row's %q exactly once", r.log.creates(), late.Number)
		}
		r.assertExactlyOnce(b.ID, 3)
	})
}

// A row in doubt whose send-by deadline is ahead (a previous leader
// recorded its intent and vanished, its request perhaps still to leave) is
// not looked up, let alone released, before its deadline plus the margin;
// the run waits for it on its own clock and, once it passes, ends with
// nothing in doubt.
func TestRunWaitsForSendByAndMargin(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r, clock := sendByRig(t, backend)
		b := r.load("takeover.csv", payments(2)...)
		rows := r.rows(b.ID)
		intent, err := r.db.Send(rows[0].Key) // in flight when this run starts
		if err != nil {
			t.Fatal(err)
		}
		due := intent.SendBy.Add(resolve.DefaultSendMargin)
		var reads atomic.Int64
		now := func() time.Time { reads.Add(1); return clock.Now() }
		opts := Options{Concurrency: 2, Retry: fast(), Now: now, ResolveAfter: time.Millisecond}

		done := start(context.Background(), New(r.db, r.svc, opts))
		eventually(t, "the other row submitted and the recovered one in doubt", func() bool {
			return r.stateOf(rows[1].Key) == payment.Submitted && r.stateOf(rows[0].Key) == payment.InDoubt
		})
		clock.Set(due.Add(-time.Millisecond))
		n := reads.Load()
		eventually(t, "the run to read its clock again", func() bool { return reads.Load() >= n+3 })
		if st := r.stateOf(rows[0].Key); st != payment.InDoubt {
			t.Fatalf("row is %s a millisecond before its deadline and margin, want in_doubt", st)
		}
		if got := r.log.count("GET", "/v1/check/list"); got != 0 {
			t.Fatalf("%d lookups before the deadline and margin, want none", got)
		}
		if got := r.log.creates(); !slices.Equal(got, []string{rows[1].Number}) {
			t.Fatalf("creates %q before the deadline, want only %q", got, rows[1].Number)
		}

		clock.Set(due)
		res := await(t, done)
		if res.err != nil {
			t.Fatalf("run: %v", res.err)
		}
		if s := res.sum; s.Recovered != 1 || s.Resent != 1 || s.InDoubt != 0 || s.Created != 2 {
			t.Fatalf("summary %+v; want the recovered row looked up after its deadline, released and sent", s)
		}
		r.assertExactlyOnce(b.ID, 2)
	})
}

// When the row cannot even be put in doubt at its deadline (the ledger
// refuses this instance's writes: it lost the lead, or the ledger failed),
// the run stops with the ledger's error and sends nothing more.
func TestDropThatCannotBeRecordedStopsTheRun(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r, clock := sendByRig(t, backend)
		b := r.load("fenced.csv", payments(2)...)
		rows := r.rows(b.ID)
		led := &stallingLedger{DB: r.db, clock: clock, at: rows[0].Key, pause: sendWindow + time.Second,
			then: func() {
				if err := r.db.Close(); err != nil {
					t.Error(err)
				}
			}}
		res := await(t, start(context.Background(), New(led, r.svc, Options{Concurrency: 1, Retry: fast(), Now: clock.Now})))
		if !errors.Is(res.err, payment.ErrLedger) || !strings.Contains(res.err.Error(), "send-by deadline") {
			t.Fatalf("run: %v; want the ledger failure of putting the row in doubt at its send-by deadline", res.err)
		}
		if got := r.log.creates(); len(got) != 0 || res.sum.Attempts != 0 || res.sum.Dropped != 0 {
			t.Fatalf("creates %q, summary %+v; want nothing sent and no drop counted", got, res.sum)
		}
	})
}

// A run stopped while it waits for a deadline leaves the row in doubt,
// sends nothing for it, and says so.
func TestStopDuringSendByWaitLeavesRowInDoubt(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r, clock := sendByRig(t, backend)
		b := r.load("stop.csv", payments(1)...)
		row := r.rows(b.ID)[0]
		if _, err := r.db.Send(row.Key); err != nil {
			t.Fatal(err)
		}
		var logged lockedBuffer
		var reads atomic.Int64
		now := func() time.Time { reads.Add(1); return clock.Now() }
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := start(ctx, New(r.db, r.svc, Options{Retry: fast(), Now: now, ResolveAfter: time.Millisecond, Logger: logged.logger()}))
		// Its clock is read once by the pass over rows in doubt, then by the
		// wait: a second read means the run is waiting.
		eventually(t, "the run to wait for the deadline", func() bool { return reads.Load() >= 2 })
		cancel()
		res := await(t, done)
		if !errors.Is(res.err, context.Canceled) || res.sum.InDoubt != 1 {
			t.Fatalf("run: %+v %v; want 1 in doubt and context.Canceled", res.sum, res.err)
		}
		if !logged.contains("waiting_for_send_by=1") {
			t.Fatalf("no log line says the row stays in doubt for its deadline:\n%s", logged.String())
		}
		if len(r.log.creates()) != 0 || r.log.count("GET", "/v1/check/list") != 0 {
			t.Fatal("a stopped run sent or looked up the row before its deadline")
		}
	})
}

// lockedBuffer collects a run's log lines; workers write concurrently.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *lockedBuffer) contains(s string) bool { return strings.Contains(b.String(), s) }

func (b *lockedBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// stallingLimiter lets every request go, but the first only after the
// clock jumped by pause: a long wait for the rate limiter.
type stallingLimiter struct {
	clock *clocktest.Clock
	pause time.Duration
	once  sync.Once
}

func (l *stallingLimiter) Wait(ctx context.Context) error {
	l.once.Do(func() { l.clock.Advance(l.pause) })
	return ctx.Err()
}
func (l *stallingLimiter) Throttled() {}

func TestDeadlinePassedInLimiterIsDropped(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r, clock := sendByRig(t, backend)
		api, err := echeck.New(apiwire.Options{BaseURL: r.srv.URL, Key: testKey, Limiter: &stallingLimiter{clock: clock, pause: sendWindow + time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		b := r.load("limited.csv", payments(1)...)
		row := r.rows(b.ID)[0]
		done := start(context.Background(), New(r.db, echeck.NewService(api), Options{Concurrency: 1, Retry: fast(), Now: clock.Now, ResolveAfter: time.Millisecond}))
		eventually(t, "the row in doubt", func() bool { return r.stateOf(row.Key) == payment.InDoubt })
		if got := r.log.creates(); len(got) != 0 {
			t.Fatalf("creates %q reached the sandbox after the deadline", got)
		}
		late, _ := r.db.Row(row.Key)
		clock.Set(late.SendBy.Add(resolve.DefaultSendMargin))
		res := await(t, done)
		t.Logf("%+v %v creates=%q", res.sum, res.err, r.log.creates())
		if res.err != nil || len(r.log.creates()) != 1 || res.sum.Dropped != 1 || res.sum.Created != 1 {
			t.Fatal("want one drop then one create after the lookup")
		}
	})
}
