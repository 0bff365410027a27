package submit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/throttle"
)

func fast() retry.Policy { return retry.Policy{Base: time.Millisecond, Max: 20 * time.Millisecond} }

func payments(n int) []payment.Payment {
	ps := make([]payment.Payment, n)
	for i := range ps {
		ps[i] = fixture(i%22+1, money.Cents(100+i))
	}
	return ps
}

func TestSubmitsEveryRowOnce(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, sandbox.Options{}, testKey)
		b := r.load("clean.csv", payments(40)...)
		sum, err := New(r.db, r.svc, Options{Concurrency: 8, Retry: fast()}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if sum.Created != 40 || sum.Attempts != 40 || sum.Pending != 0 || sum.InDoubt != 0 {
			t.Fatalf("summary %+v", sum)
		}
		r.assertExactlyOnce(b.ID, 40)
		for _, row := range r.rows(b.ID) {
			if row.Payment.BankAccount != "" {
				t.Fatalf("row %s kept the full account number after submission", row.Key)
			}
		}
		// A second run finds nothing to do and sends nothing.
		sum, err = New(r.db, r.svc, Options{}).Run(context.Background())
		if err != nil || sum.Attempts != 0 {
			t.Fatalf("second run: %+v %v", sum, err)
		}
	})
}

func TestUnauthorizedStopsWithRowsUntouched(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, sandbox.Options{Keys: []sandbox.Key{{Value: "sk_test_the_right_key"}}}, "sk_test_a_wrong_key_12345")
		b := r.load("a.csv", payments(5)...)
		sum, err := New(r.db, r.svc, Options{Concurrency: 2, Retry: fast()}).Run(context.Background())
		if !errors.Is(err, payment.ErrKeyRefused) || !strings.Contains(err.Error(), "api.key_file") {
			t.Fatalf("want payment.ErrKeyRefused naming what to fix, got %v", err)
		}
		if sum.Created != 0 || sum.Pending != 5 {
			t.Fatalf("summary %+v", sum)
		}
		for _, row := range r.rows(b.ID) {
			if row.State != payment.Pending || row.CheckID != "" || row.Payment.BankAccount == "" {
				t.Fatalf("row %s changed: %+v", row.Key, row)
			}
		}
		if got := r.sb.KeyStats("sk_test_the_right_key").Checks; got != 0 {
			t.Fatalf("%d checks created", got)
		}
		// At most one request per worker reached the service before the stop.
		if sum.Attempts > 2 {
			t.Fatalf("%d creates sent after a 401", sum.Attempts)
		}
	})
}

func TestBadRequestFailsOnlyThatRow(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, sandbox.Options{}, testKey)
		ps := payments(3)
		ps[1].Memo = strings.Repeat("m", 129) // the service refuses it
		b := r.load("a.csv", ps...)
		sum, err := New(r.db, r.svc, Options{Retry: fast()}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if sum.Created != 2 || sum.Rejected != 1 {
			t.Fatalf("summary %+v", sum)
		}
		rows := r.rows(b.ID)
		if rows[1].State != payment.Rejected || !strings.Contains(rows[1].Error, "memo") {
			t.Fatalf("row 3: %s %q", rows[1].State, rows[1].Error)
		}
		if rows[1].Attempts != 1 {
			t.Fatalf("a 400 was retried: %d attempts", rows[1].Attempts)
		}
		if rows[0].State != payment.Submitted || rows[2].State != payment.Submitted {
			t.Fatal("other rows not submitted")
		}
	})
}

func TestRetryAfterIsHonoured(t *testing.T) {
	// Retry-After is the client's, not the ledger's: bbolt alone.
	r := newRig(t, ledgertest.Bbolt, sandbox.Options{RateLimit: 2}, testKey)
	lim := throttle.New(0, 1) // batchd's own ceiling is off: the service's 429s pace it
	api, _ := echeck.New(apiwire.Options{BaseURL: r.srv.URL, Key: testKey, Limiter: lim})
	b := r.load("a.csv", payments(6)...)
	sum, err := New(r.db, echeck.NewService(api), Options{Concurrency: 1, Retry: fast()}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r.assertExactlyOnce(b.ID, 6)
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	var creates []logEntry
	for _, e := range r.log.entries {
		if e.path == "/v1/check/create" {
			creates = append(creates, e)
		}
	}
	throttled := 0
	for i, e := range creates {
		if e.status != 429 {
			continue
		}
		throttled++
		if i+1 >= len(creates) {
			t.Fatal("the last create was throttled, yet every row was submitted")
		}
		// The sandbox answers Retry-After: 1 (whole seconds).
		if gap := creates[i+1].at.Sub(e.at); gap < 900*time.Millisecond {
			t.Fatalf("request %d came %v after a 429 with Retry-After 1s", i+1, gap)
		}
	}
	if throttled == 0 {
		t.Fatal("the sandbox never answered 429; the test proves nothing")
	}
	if sum.Attempts != 6+throttled {
		t.Fatalf("attempts %d, want %d creates + %d throttled", sum.Attempts, 6, throttled)
	}
}

func TestVoidOnRisk(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, sandbox.Options{}, testKey)
		fail, pass := fixture(5, 1000), fixture(16, 2000)
		fail.VerifyBeforeSave, pass.VerifyBeforeSave = true, true
		b := r.load("a.csv", fail, pass)
		sum, err := New(r.db, r.svc, Options{VoidOnRisk: []string{"Fail"}, Retry: fast()}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if sum.Voided != 1 {
			t.Fatalf("summary %+v", sum)
		}
		rows := r.rows(b.ID)
		if rows[0].Risk != "Fail" || rows[0].CheckStatus != "void" || !strings.Contains(rows[0].Error, "void_on_risk") {
			t.Fatalf("account 5 row: risk %q status %q error %q", rows[0].Risk, rows[0].CheckStatus, rows[0].Error)
		}
		if rows[1].Risk != "Pass" || rows[1].CheckStatus != "in_process" {
			t.Fatalf("account 16 row: risk %q status %q", rows[1].Risk, rows[1].CheckStatus)
		}
		for _, row := range rows {
			c, err := r.api.GetCheck(context.Background(), row.CheckID)
			if err != nil || payment.Status(c.Status) != row.CheckStatus {
				t.Fatalf("service says %v %v for row %s (%s)", c, err, row.Key, row.CheckStatus)
			}
		}
	})
}

func TestLostAnswersAreResolvedNotResent(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, sandbox.Options{DropRate: 0.3, ErrorRate: 0.2, Seed: 7}, testKey)
		b := r.load("a.csv", payments(60)...)
		sum, err := New(r.db, r.svc, Options{Concurrency: 6, ResolveAfter: 20 * time.Millisecond, SendMargin: testSendMargin, Retry: retry.Policy{Base: time.Millisecond, Max: 20 * time.Millisecond, MaxAttempts: 50}}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r.sb.Stats().Drops == 0 {
			t.Fatal("no answer was dropped; the test proves nothing")
		}
		if sum.InDoubt != 0 || sum.Pending != 0 {
			t.Fatalf("summary %+v", sum)
		}
		r.assertExactlyOnce(b.ID, 60)
		found := 0
		for _, row := range r.rows(b.ID) {
			for _, s := range row.History {
				if strings.Contains(s.Note, "found by label and number") {
					found++
				}
			}
		}
		if found == 0 {
			t.Fatal("no row was resolved by lookup")
		}
	})
}

func TestRecoveryAfterCrash(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, sandbox.Options{}, testKey)
		b := r.load("a.csv", payments(2)...)
		// The previous process marked both rows in flight; the first create
		// reached the service, the second never left.
		rows := r.rows(b.ID)
		for _, row := range rows {
			if _, err := r.db.Send(row.Key); err != nil {
				t.Fatal(err)
			}
		}
		req := echeck.RequestOf(rows[0])
		if _, err := r.api.CreateCheck(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		sum, err := New(r.db, r.svc, Options{ResolveAfter: time.Millisecond, SendMargin: testSendMargin, Retry: fast()}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if sum.Recovered != 2 || sum.Resent != 1 || sum.Attempts != 1 {
			t.Fatalf("summary %+v: want 2 recovered, 1 found, 1 resent", sum)
		}
		r.assertExactlyOnce(b.ID, 2)
	})
}

func TestGracefulStop(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, sandbox.Options{Latency: 20 * time.Millisecond}, testKey)
		b := r.load("a.csv", payments(200)...)
		ctx, cancel := context.WithCancel(context.Background())
		run := New(r.db, r.svc, Options{Concurrency: 4, Retry: fast()})
		done := make(chan struct{})
		var sum Summary
		var err error
		go func() { sum, err = run.Run(ctx); close(done) }()
		for run.Done() < 10 {
			select {
			case <-done:
				t.Fatal("run ended before the stop")
			default:
			}
			time.Sleep(time.Millisecond) // polling a counter, not waiting for an outcome
		}
		cancel()
		<-done
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run after cancel: %v", err)
		}
		if sum.InDoubt != 0 || sum.Pending == 0 || sum.Created+sum.Pending != 200 {
			t.Fatalf("summary %+v: in-flight creates must finish, the rest stay pending", sum)
		}
		checks := r.serviceChecks()
		if len(checks) != sum.Created {
			t.Fatalf("service has %d checks, ledger says %d created", len(checks), sum.Created)
		}
		_ = b
	})
}

// A run against a service that fails every request ends with the work
// undone and says so: never a quiet success.
func TestFailingServiceIsIncomplete(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, sandbox.Options{ErrorRate: 1.0, Seed: 7}, testKey)
		b := r.load("a.csv", payments(5)...)
		sum, err := New(r.db, r.svc, Options{ResolveAfter: time.Millisecond, SendMargin: testSendMargin,
			Retry: retry.Policy{Base: time.Millisecond, Max: 5 * time.Millisecond, MaxAttempts: 3}}).Run(context.Background())
		if !errors.Is(err, ErrIncomplete) {
			t.Fatalf("Run = %v, want ErrIncomplete", err)
		}
		if sum.Created != 0 || sum.Pending+sum.InDoubt != 5 {
			t.Fatalf("summary %+v: want nothing created and 5 rows left", sum)
		}
		if !strings.Contains(err.Error(), "pending") || !strings.Contains(err.Error(), "in doubt") {
			t.Fatalf("error does not say what is left: %v", err)
		}
		// The service recovers: the next run finishes, exactly once.
		healthy := newRig(t, backend, sandbox.Options{}, testKey)
		healthy.db = r.db
		if _, err := New(r.db, healthy.svc, Options{ResolveAfter: time.Millisecond, SendMargin: testSendMargin, Retry: fast()}).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		healthy.assertExactlyOnce(b.ID, 5)
	})
}

// A ledger that cannot be written stops the run at once with an error
// that names the ledger and the cause; no create leaves without its intent
// on disk.
func TestLedgerFailureStopsTheRun(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, sandbox.Options{}, testKey)
		r.load("a.csv", payments(3)...)
		if err := r.db.Close(); err != nil { // every write now fails
			t.Fatal(err)
		}
		_, err := New(r.db, r.svc, Options{Retry: fast()}).Run(context.Background())
		if !errors.Is(err, payment.ErrLedger) || !strings.Contains(err.Error(), "cannot") || !strings.Contains(err.Error(), "the ledger") {
			t.Fatalf("Run = %v, want a ledger failure naming the ledger", err)
		}
		if got := len(r.serviceChecks()); got != 0 {
			t.Fatalf("%d checks made without a durable intent", got)
		}
	})
}
