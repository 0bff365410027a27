package onboard

import (
	"context"
	"flag"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ach"
	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/inflight"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/throttle"
)

var (
	benchRows     = flag.Int("onboard.bench.rows", 200, "funding-source rows (one customer each) of BenchmarkOnboardAdaptive")
	benchBackends = flag.String("onboard.bench.backends", "bbolt,postgres", "ledgers BenchmarkOnboardAdaptive runs on")
)

// BenchmarkOnboardAdaptive onboards rows of as many new customers (a
// customer and a source each: two creates a row) against the sandbox at
// 300 ms latency enforcing api.rate 20, on each ledger, twice:
// "sequential", an in-flight limit of one (one row at a time, what
// onboarding did before), then "default", the Options internal/jobs
// builds from config.Default() with api.rate set (the adaptive limit,
// api.concurrency 64 as its ceiling, following the rate limiter). It
// reports rows/s, calls/s, pct_of_rate (calls/s over api.rate),
// pct_of_floor (the floor, (calls - burst)/rate, over the time taken: the
// bucket starts full), x_sequential (default's rows/s over sequential's,
// measured just before) and limit, the in-flight limit at the end.
func BenchmarkOnboardAdaptive(b *testing.B) {
	const latency, rate = 300 * time.Millisecond, 20.0
	for _, be := range []string{ledgertest.Bbolt, ledgertest.Postgres} {
		if !strings.Contains(","+*benchBackends+",", ","+be+",") {
			continue
		}
		b.Run("latency=300ms,rate=20/"+be, func(b *testing.B) {
			var seq float64
			for _, mode := range []string{"sequential", "default"} {
				b.Run(mode, func(b *testing.B) {
					perSec, lim := benchOnboard(b, be, mode, latency, rate)
					if mode == "sequential" {
						seq = perSec
					} else if seq > 0 {
						b.ReportMetric(perSec/seq, "x_sequential")
					}
					b.ReportMetric(float64(lim.Current()), "limit")
				})
			}
		})
	}
}

// benchOnboard runs b.N onboardings of *benchRows rows on fresh ledgers
// and sandboxes, reports the rates and returns rows/s.
func benchOnboard(b *testing.B, backend, mode string, latency time.Duration, rate float64) (float64, *inflight.Limit) {
	cfg := config.Default()
	cfg.API.Rate = rate
	var elapsed time.Duration
	var rows, calls int
	var lim *inflight.Limit
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db := ledgertest.Open(b, backend, state.Options{})
		loadCustomers(b, db, *benchRows)
		sb := sandbox.New(sandbox.Options{Latency: latency, RateLimit: rate})
		srv := httptest.NewServer(sb)
		limiter := throttle.New(cfg.API.Rate, cfg.API.Burst)
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = max(cfg.API.Concurrency, 2)
		api, err := ach.New(apiwire.Options{BaseURL: srv.URL, Key: testKey, Timeout: cfg.API.Timeout.Std(),
			HTTPClient: &http.Client{Transport: tr}, Limiter: limiter})
		if err != nil {
			b.Fatal(err)
		}
		lim = inflight.New(inflight.Options{Ceiling: cfg.API.Concurrency, Rate: limiter.Rate})
		if mode == "sequential" {
			lim = inflight.New(inflight.Options{Ceiling: 1})
		}
		// The Options internal/jobs.Env.Onboarder builds (less the
		// reports), on the wall clock.
		run := New(db, ach.NewFundingService(api, cfg.ACH.Provider), Options{
			Retry:        retry.Policy{Max: cfg.Submit.BackoffMax.Std(), MaxAttempts: cfg.Submit.MaxAttempts},
			ResolveAfter: cfg.Submit.ResolveAfter.Std(), Limit: lim,
		})
		b.StartTimer()
		start := time.Now()
		sum, err := run.Run(context.Background())
		took := time.Since(start)
		b.StopTimer()
		srv.Close()
		if err != nil || sum.Created != *benchRows || sum.Customers != *benchRows {
			b.Fatalf("run: %v, summary %+v", err, sum)
		}
		if st := sb.Stats(); st.Customers != *benchRows || st.FundingSources != *benchRows {
			b.Fatalf("the sandbox holds %d customers and %d sources for %d rows", st.Customers, st.FundingSources, *benchRows)
		}
		elapsed += took
		rows += sum.Created
		calls += sum.Calls
	}
	perSec := float64(rows) / elapsed.Seconds()
	callsPerSec := float64(calls) / elapsed.Seconds()
	floor := math.Max(0, float64(calls/b.N-cfg.API.Burst)) / rate
	b.ReportMetric(perSec, "rows/s")
	b.ReportMetric(callsPerSec, "calls/s")
	b.ReportMetric(100*callsPerSec/rate, "pct_of_rate")
	b.ReportMetric(100*floor*float64(b.N)/elapsed.Seconds(), "pct_of_floor")
	b.Logf("%s on %s: %d rows, %d calls in %s (floor %.1fs)", mode, backend, rows/b.N, calls/b.N, elapsed/time.Duration(b.N), floor)
	return perSec, lim
}

// loadCustomers commits one batch of n on-demand rows of n new customers.
func loadCustomers(b *testing.B, db *state.DB, n int) {
	l, err := db.BeginBatch(payment.FileMeta{Kind: payment.KindSources, Name: "bench.csv", SHA256: fmt.Sprintf("bench-%d", n)})
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		q := onDemand(customer(fmt.Sprintf("bench%04d", i)), otherRouting, fmt.Sprintf("8800%04d", i))
		if err := l.(funding.Loader).AddSource(i+2, q); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := l.Commit(n, 0); err != nil {
		b.Fatal(err)
	}
}
