package submit

import (
	"flag"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/inflight"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/throttle"
)

// The adaptive concurrency benchmarks (issue 21): submit with the default
// configuration, only api.rate set, against the sandbox enforcing that
// rate, and the old fixed 4 workers in the same run as the baseline.
var (
	adaptSlowRows = flag.Int("submit.adapt.slow.rows", 600, "rows of BenchmarkSubmitAdaptive at 300 ms and 20/s")
	adaptFastRows = flag.Int("submit.adapt.fast.rows", 5_500, "rows of BenchmarkSubmitAdaptive at 5 ms and 500/s (11 s)")
	adaptBackends = flag.String("submit.adapt.backends", "bbolt,postgres", "ledgers BenchmarkSubmitAdaptive runs on (postgres: only at 300 ms)")
)

// adaptCase is one latency and rate of BenchmarkSubmitAdaptive.
type adaptCase struct {
	name    string
	rows    int
	latency time.Duration
	rate    float64
	pg      bool // also on PostgreSQL
}

// BenchmarkSubmitAdaptive submits at each latency and api.rate, on each
// ledger, twice: "fixed4", the old default of 4 fixed workers (an
// in-flight limit fixed at 4), then "default", the Options internal/jobs
// builds from config.Default() with api.rate set (api.concurrency 64 as a
// ceiling, the adaptive limit following the rate limiter). It reports
// creates/s, pct_of_limit (creates/s over api.rate), pct_of_floor (the
// floor, (rows - burst)/rate, over the time taken: the bucket starts
// full), x_fixed4 (default's creates/s over fixed4's, measured just
// before), and limit, the in-flight limit at the end.
func BenchmarkSubmitAdaptive(b *testing.B) {
	defer stopBenchServer(b)
	cases := []adaptCase{
		{"latency=300ms,rate=20", *adaptSlowRows, 300 * time.Millisecond, 20, true},
		{"latency=5ms,rate=500", *adaptFastRows, 5 * time.Millisecond, 500, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for _, be := range benchBackends(b) {
				if !adaptOn(be.name, c) {
					continue
				}
				b.Run(be.name, func(b *testing.B) { benchAdaptive(b, c, be) })
			}
		})
	}
}

// adaptOn reports whether case c runs on backend.
func adaptOn(backend string, c adaptCase) bool {
	if backend == "postgres" && !c.pg {
		return false
	}
	for _, n := range strings.Split(*adaptBackends, ",") {
		if n == backend {
			return true
		}
	}
	return false
}

// benchAdaptive runs fixed4 then default on backend be.
func benchAdaptive(b *testing.B, c adaptCase, be ledgerBackend) {
	cfg := config.Default()
	cfg.API.Rate = c.rate
	var fixed float64
	for _, mode := range []string{"fixed4", "default"} {
		b.Run(mode, func(b *testing.B) {
			var last *inflight.Limit
			s := benchSetup{rows: c.rows, rate: c.rate, burst: cfg.API.Burst,
				sandbox: sandbox.Options{Latency: c.latency, RateLimit: c.rate}}
			if mode == "fixed4" {
				s.concurrency = 4
			} else {
				s.concurrency = cfg.API.Concurrency
				s.options = func(lim *throttle.Limiter) Options {
					last = inflight.New(inflight.Options{Ceiling: cfg.API.Concurrency, Rate: lim.Rate})
					return jobsOptions(cfg, last)
				}
			}
			perSec := benchAdaptiveRuns(b, s, be)
			if mode == "fixed4" {
				fixed = perSec
			} else if fixed > 0 {
				b.ReportMetric(perSec/fixed, "x_fixed4")
			}
			if last != nil {
				b.ReportMetric(float64(last.Current()), "limit")
			}
		})
	}
}

// jobsOptions are the Options internal/jobs.Env.Submitter builds from cfg
// (less the hooks and the clock, the wall clock here).
func jobsOptions(cfg *config.Config, lim *inflight.Limit) Options {
	return Options{
		Concurrency: cfg.API.Concurrency, Limit: lim, ResolveAfter: cfg.Submit.ResolveAfter.Std(),
		VoidOnRisk: cfg.Submit.VoidOnRisk,
		Retry:      retry.Policy{Max: cfg.Submit.BackoffMax.Std(), MaxAttempts: cfg.Submit.MaxAttempts},
		BreakAfter: 2 * cfg.Health.FailingAfter.Std(),
	}
}

// benchAdaptiveRuns runs s b.N times on fresh ledgers of be and reports
// the rates; it returns creates/s.
func benchAdaptiveRuns(b *testing.B, s benchSetup, be ledgerBackend) float64 {
	var total benchRun
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db := be.open(b)
		loadRows(b, db.DB, s.rows)
		r := submitOn(b, s, db.DB)
		total.created += r.created
		total.elapsed += r.elapsed
		total.rateLimited += r.rateLimited
	}
	perSec := float64(total.created) / total.elapsed.Seconds()
	floor := time.Duration(math.Max(0, float64(s.rows-s.burst)) / s.rate * float64(time.Second))
	b.ReportMetric(perSec, "creates/s")
	b.ReportMetric(100*perSec/s.rate, "pct_of_limit")
	b.ReportMetric(100*float64(b.N)*floor.Seconds()/total.elapsed.Seconds(), "pct_of_floor")
	b.ReportMetric(float64(total.rateLimited)/float64(b.N), "rate_limited")
	b.Logf("%d rows in %s (floor %s) with %s workers", s.rows, total.elapsed/time.Duration(b.N), floor, strconv.Itoa(s.concurrency))
	return perSec
}
