package submit

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/throttle"
)

// The sizes of the submit benchmarks. The defaults keep `go test -bench .`
// to about half a minute; the acceptance figures (docs/benchmarks.md) use
// -submit.limited.creates 20000.
var (
	limitedCreates   = flag.Int("submit.limited.creates", 2_000, "rows BenchmarkSubmitRateLimited creates (the acceptance run uses 20000: 100 s)")
	unlimitedCreates = flag.Int("submit.creates", 20_000, "rows BenchmarkSubmitUnlimited creates")
)

const (
	benchLatency = 20 * time.Millisecond // the sandbox's added latency per request
	benchRate    = 200                   // api.rate of the rate-limited benchmark
	// benchBurst is the token bucket of the rate-limited benchmark: 0.1 s
	// of budget. A bucket starts full, so a burst of B lets B creates go
	// at once and the measured rate over N creates comes out about
	// N/(N-B) times the configured one: 20 inflates 20,000 creates by
	// 0.1%. It still lets the workers make up a stall of up to 100 ms (an
	// fsync, a GC) instead of losing those tokens for good, as a bucket
	// of 1 would.
	benchBurst     = 20
	goalCreates    = 1500 // creates/s the unlimited benchmark must reach
	goalCommitsRow = 2    // bbolt commits per row it may spend at most
	benchKey       = "sk_test_submit_bench_0123456789"
)

// passAccounts are sandbox fixture accounts whose risk result is Pass.
var passAccounts = [...]int{8, 10, 16, 18, 20, 22}

// BenchmarkSubmitRateLimited is acceptance (a): with api.rate 200 against
// the sandbox at 20 ms latency, the rate achieved over the creates, as a
// percentage of 200/s (pct_of_limit; the goal is at least 97). The sandbox
// enforces the same 200/s per key, so a client that overshot would be
// answered 429 (counted in rate_limited and halving the rate).
//
// Everything is real: loopback HTTP, the production client with the
// shared throttle.Limiter, and the Runner over an on-disk ledger with
// fsync. Each iteration loads a new ledger outside the timer; the timer
// covers Runner.Run alone.
func BenchmarkSubmitRateLimited(b *testing.B) {
	benchSubmit(b, benchSetup{
		rows: *limitedCreates, rate: benchRate, burst: benchBurst, concurrency: 16,
		sandbox: sandbox.Options{Latency: benchLatency, RateLimit: benchRate},
	})
}

// BenchmarkSubmitUnlimited is acceptance (b): no rate limit, 128
// workers, durable state. It reports creates/s (goal 1,500), x_goal
// (creates/s over 1,500), and commits/row, the ledger's fsync'd bbolt
// commits per created row (goal at most 2; every row takes at least two
// transitions, Send and Created, so without group commit it would be 2
// or more).
func BenchmarkSubmitUnlimited(b *testing.B) {
	for _, c := range []int{64, 128} {
		b.Run("workers="+strconv.Itoa(c), func(b *testing.B) {
			benchSubmit(b, benchSetup{
				rows: *unlimitedCreates, concurrency: c,
				sandbox: sandbox.Options{Latency: benchLatency},
			})
		})
	}
}

// benchSetup is one submit benchmark's configuration.
type benchSetup struct {
	rows        int
	rate        float64 // api.rate; 0 means unlimited
	burst       int
	concurrency int
	sandbox     sandbox.Options
	// options, when set, builds the Runner's options over the run's rate
	// limiter (the adaptive benchmarks build them as internal/jobs does);
	// nil means Concurrency fixed workers.
	options func(*throttle.Limiter) Options
}

// benchRun is what one timed Run did.
type benchRun struct {
	created     int
	elapsed     time.Duration
	commits     int64
	rateLimited int64
}

func benchSubmit(b *testing.B, s benchSetup) {
	var total benchRun
	for i := 0; i < b.N; i++ {
		r := runOnce(b, s)
		total.created += r.created
		total.elapsed += r.elapsed
		total.commits += r.commits
		total.rateLimited += r.rateLimited
	}
	perSec := float64(total.created) / total.elapsed.Seconds()
	b.ReportMetric(perSec, "creates/s")
	b.ReportMetric(float64(total.commits)/float64(total.created), "commits/row")
	b.ReportMetric(float64(total.rateLimited)/float64(b.N), "rate_limited")
	if s.rate > 0 {
		b.ReportMetric(100*perSec/s.rate, "pct_of_limit")
	} else {
		b.ReportMetric(perSec/goalCreates, "x_goal")
	}
}

// runOnce loads s.rows rows into a new ledger, serves a new sandbox over
// loopback, and times one Runner.Run over them.
func runOnce(b *testing.B, s benchSetup) benchRun {
	b.StopTimer()
	db, err := state.Open(b.TempDir(), state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	loadRows(b, db, s.rows)
	sb := sandbox.New(s.sandbox)
	srv := httptest.NewServer(sb)
	defer srv.Close()
	lim := throttle.New(s.rate, s.burst)
	// The client as internal/jobs builds it: one idle connection per
	// worker, the shared limiter.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = max(s.concurrency, 2)
	api, err := echeck.New(apiwire.Options{BaseURL: srv.URL, Key: benchKey, Timeout: 30 * time.Second,
		HTTPClient: &http.Client{Transport: tr}, Limiter: lim})
	if err != nil {
		b.Fatal(err)
	}
	run := New(db, echeck.NewService(api), Options{Concurrency: s.concurrency})
	commits := db.Commits()

	b.StartTimer()
	start := time.Now()
	sum, err := run.Run(context.Background())
	elapsed := time.Since(start)
	b.StopTimer()

	if err != nil {
		b.Fatal(err)
	}
	if sum.Created != s.rows || sum.Pending+sum.InDoubt+sum.Rejected != 0 {
		b.Fatalf("summary %+v, want %d created and nothing else", sum, s.rows)
	}
	st := sb.Stats()
	if st.Creates != int64(s.rows) {
		b.Fatalf("the sandbox stored %d checks for %d rows", st.Creates, s.rows)
	}
	return benchRun{created: sum.Created, elapsed: elapsed, commits: db.Commits() - commits, rateLimited: st.RateLimited}
}

// loadRows commits one batch of n payments on the sandbox's Pass
// fixtures; the ledger numbers them.
func loadRows(b *testing.B, db *state.DB, n int) {
	l, err := db.BeginBatch(payment.FileMeta{Name: "bench.csv", SHA256: "bench-" + strconv.Itoa(n)})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		p := fixture(passAccounts[i%len(passAccounts)], money.Cents(100+i%10_000))
		if err := l.Add(i+2, p); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := l.Commit(n, 0); err != nil {
		b.Fatal(err)
	}
}
