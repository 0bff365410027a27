package reconcile

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/throttle"
)

// BenchmarkReconcile100k reconciles 100,000 checks, all matched to ledger
// rows, through a client limited to benchRate requests a second: 1,000
// pages of 100, so no run can take less than the floor of 999/benchRate
// seconds (the first request takes the limiter's one token of burst). It
// reports the run's time as a multiple of that floor, and the process's
// peak resident memory during the run (VmHWM, reset before the run; it
// includes the ledger's memory map, but not the sandbox, which runs in a
// child process as the real service would run elsewhere). The sandbox
// still shares the machine's CPUs, and its CPU time is logged.
func BenchmarkReconcile100k(b *testing.B) {
	const (
		checks    = 100_000
		batches   = 10
		benchRate = 200.0
	)
	url, pid := startSandboxProcess(b)
	e := newEnvAt(b, ledgertest.Bbolt, url, monday(), nil)
	start := time.Now()
	for i := range batches {
		e.submitBatch(e.load(fmt.Sprintf("bench-%d.csv", i), manyPayments(checks/batches)...), 256)
	}
	st, _ := os.Stat(e.db.Path())
	b.Logf("setup: %d checks created and recorded in %s; ledger %d MB", checks, time.Since(start).Round(time.Second), st.Size()>>20)
	floor := time.Duration(float64(checks/DefaultPageSize-1) / benchRate * float64(time.Second))
	for _, conc := range []int{DefaultConcurrency, 8} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			api, err := echeck.New(apiwire.Options{BaseURL: e.url, Key: testKey, Limiter: throttle.New(benchRate, 1)})
			if err != nil {
				b.Fatal(err)
			}
			var logs bytes.Buffer
			r := e.runner(echeck.NewService(api), Options{Concurrency: conc, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			runtime.GC()
			debug.FreeOSMemory()
			base := procStatus(b, "VmRSS")
			resetPeakRSS(b)
			if p := os.Getenv("RUNPROF"); p != "" {
				f, _ := os.Create(fmt.Sprintf("%s.%d", p, conc))
				pprof.StartCPUProfile(f)
				defer pprof.StopCPUProfile()
			}
			stop := sampleRSS(b)
			cpu0, child0 := cpuTime(), childCPU(b, pid)
			var sum *Summary
			b.ResetTimer()
			for b.Loop() {
				sum, err = r.Run(context.Background(), Window{})
				if err != nil {
					b.Fatal(err)
				}
			}
			elapsed := b.Elapsed() / time.Duration(b.N)
			b.StopTimer()
			cpu, child := (cpuTime()-cpu0)/time.Duration(b.N), (childCPU(b, pid)-child0)/time.Duration(b.N)
			peak := procStatus(b, "VmHWM")
			anon, file := stop()
			if sum.ChecksSeen != checks || sum.Matched != checks || sum.PagesRead != checks/DefaultPageSize || sum.StatusRows != checks {
				b.Fatalf("summary %+v", sum)
			}
			b.ReportMetric(float64(elapsed)/float64(floor), "x-floor")
			b.ReportMetric(float64(peak)/1024, "peak-RSS-MB")
			b.ReportMetric(float64(sum.PagesRead)/elapsed.Seconds(), "pages/s")
			b.Logf("elapsed %s, floor %s; RSS before the run %d MB, peak %d MB (sampled peaks: anonymous %d MB, file-backed %d MB)",
				elapsed.Round(time.Millisecond), floor, base/1024, peak/1024, anon/1024, file/1024)
			b.Logf("CPU time a run: batchd %s, sandbox process %s", cpu.Round(time.Millisecond), child.Round(time.Millisecond))
			b.Logf("log:\n%s", logs.String())
		})
	}
}

// BenchmarkReconcileWebhooks100k counts the API requests of a reconcile
// with and without webhooks, on the in-process sandbox and a real ledger:
// 100,000 checks created and reconciled once, 99,000 of them then
// deposited, and the last 1,000 deposited by webhook (at the sandbox, and
// in the ledger through ObserveStatuses, as the receiver records them).
// It reports the requests of the next run each way and their ratio, and,
// for scale, those of a webhooks run made before the last 1,000 events
// arrived, when those rows were still open. Counts are exact; the times
// logged are not the point.
func BenchmarkReconcileWebhooks100k(b *testing.B) {
	const (
		checks  = 100_000
		changed = 1_000
	)
	e := newEnv(b, ledgertest.Bbolt, monday(), nil)
	ev := &fakeEvents{}
	start := time.Now()
	keys, ids := settledLedger(b, e, checks, checks-changed, ev)
	b.Logf("setup: %d checks created, reconciled and %d deposited in %s", checks, checks-changed, time.Since(start).Round(time.Second))
	t0 := time.Now()
	before := e.run(hooked(ev, Options{}))
	b.Logf("webhooks, %d rows still open: %d calls (%s: %s) in %s", changed, before.Calls, before.Plan, before.PlanReason,
		time.Since(t0).Round(time.Millisecond))
	e.deliver(keys[checks-changed:], ids[checks-changed:])
	var hooks, full *Summary
	var hooksTime, fullTime time.Duration
	for b.Loop() {
		t0 = time.Now()
		hooks = e.run(hooked(ev, Options{}))
		hooksTime = time.Since(t0)
		t0 = time.Now()
		full = e.run(Options{})
		fullTime = time.Since(t0)
	}
	if full.Plan != PlanFullWalk || full.PagesRead != checks/DefaultPageSize || hooks.StatusRows != checks || full.StatusRows != checks {
		b.Fatalf("webhooks %+v\nfull walk %+v", hooks, full)
	}
	b.ReportMetric(float64(full.Calls), "calls-full-walk")
	b.ReportMetric(float64(hooks.Calls), "calls-webhooks")
	b.ReportMetric(float64(hooks.Calls)/float64(full.Calls), "webhooks/full")
	b.ReportMetric(float64(before.Calls), "calls-webhooks-before-events")
	b.Logf("full walk: %d calls in %s; webhooks: %d calls (%s: %s) in %s", full.Calls, fullTime.Round(time.Millisecond),
		hooks.Calls, hooks.Plan, hooks.PlanReason, hooksTime.Round(time.Millisecond))
}

// BenchmarkReconcileRanges100k counts the API requests of a webhooks run
// on the shape a stuck check makes costly: 100,000 checks over 60 days
// (in-process sandbox, real bbolt ledger), all deposited by webhook but
// the last day's 1,000 and one check 30 days old. It reports the run's
// requests, the minimum it computed and their ratio, the acceptance
// bound 2 x ceil(1000/100) + 1 GET, and, on the same ledger in the same
// run, what the single-range plan before it would have cost
// (singleRangeCalls). Counts are exact; the times logged are not the
// point.
func BenchmarkReconcileRanges100k(b *testing.B) {
	const days, recent, older, stray = stuckDays, stuckRecent, stuckOlder, stuckStray
	e := newEnv(b, ledgertest.Bbolt, monday().AddDate(0, 0, -(days-1)), nil)
	ev := &fakeEvents{}
	start := time.Now()
	open := spreadLedger(b, e, days, stuckPerDay, stray, ev)
	counts := e.countDays()
	b.Logf("setup: %d checks over %d days, %d left open, in %s", recent+older, days, len(open), time.Since(start).Round(time.Second))
	var sum *Summary
	var took time.Duration
	for b.Loop() {
		t0 := time.Now()
		sum = e.run(hooked(ev, Options{}))
		took = time.Since(t0)
	}
	baseline := singleRangeCalls(counts, sum.Window, DefaultPageSize)
	bound := 2*ceilDiv(recent, DefaultPageSize) + 1
	if sum.Plan != PlanWalk || sum.StatusRows < recent+1 || !sum.Consistent {
		b.Fatalf("summary %+v", sum)
	}
	b.ReportMetric(float64(sum.Calls), "calls")
	b.ReportMetric(float64(sum.MinCalls), "calls-minimum")
	b.ReportMetric(float64(sum.Calls)/float64(sum.MinCalls), "calls/minimum")
	b.ReportMetric(float64(bound), "calls-bound")
	b.ReportMetric(float64(baseline), "calls-single-range")
	b.Logf("calls %d (minimum %d, bound %d; the single-range plan: %d) in %s; window %s; %s: %s",
		sum.Calls, sum.MinCalls, bound, baseline, took.Round(time.Millisecond), sum.Window, sum.Plan, sum.PlanReason)
}

// childCPU is the CPU time the process pid has used (Linux, 100 ticks a
// second).
func childCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	return ticks(raw)
}

// ticks is the user and system time in a /proc/PID/stat line (Linux,
// 100 ticks a second).
func ticks(raw []byte) time.Duration {
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// procStatus reads a kB figure of /proc/self/status.
func procStatus(b *testing.B, field string) int64 {
	b.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// resetPeakRSS makes VmHWM start again from the current RSS (Linux 4.0+),
// so that the peak measured is the run's, not the setup's.
func resetPeakRSS(b *testing.B) {
	b.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Fatalf("reset peak RSS: %v", err)
	}
}

// sampleRSS samples the anonymous and the file-backed parts of the RSS
// every 20ms until the returned function is called, which returns their
// peaks in kB. The file-backed part is mostly the ledger's memory map.
func sampleRSS(b *testing.B) func() (anon, file int64) {
	done := make(chan struct{})
	result := make(chan [2]int64)
	go func() {
		var peak [2]int64
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			peak[0] = max(peak[0], procStatus(b, "RssAnon"))
			peak[1] = max(peak[1], procStatus(b, "RssFile"))
			select {
			case <-done:
				result <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() (int64, int64) {
		close(done)
		p := <-result
		return p[0], p[1]
	}
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The ledger a stuck check makes costly: 100,000 checks over 60 days,
// the last day's 1,000 and one check 30 days old (day stuckStray) left
// not final by spreadLedger.
const (
	stuckDays, stuckRecent, stuckOlder = 60, 1_000, 99_000
	stuckStray                         = stuckDays - 1 - 30
)

// stuckPerDay is how many checks day d of stuckDays gets: the older ones
// spread evenly, the last day stuckRecent.
func stuckPerDay(d int) int {
	if d == stuckDays-1 {
		return stuckRecent
	}
	return stuckOlder*(d+1)/(stuckDays-1) - stuckOlder*d/(stuckDays-1)
}

// BenchmarkReconcileListed100k is BenchmarkReconcileRanges100k's ledger
// without webhooks: 100,000 checks over 60 days, the last day's 1,000 and
// one 30 days old not final. The first run without webhooks walks its
// window in full and records the listing; the next day's run lists only
// the dates since and fetches the old check by id. The baseline, in the
// same run, is the walk every run made before: the same window named
// explicitly, which is always walked in full.
func BenchmarkReconcileListed100k(b *testing.B) {
	e := newEnv(b, ledgertest.Bbolt, monday().AddDate(0, 0, -(stuckDays-1)), nil)
	spreadLedger(b, e, stuckDays, stuckPerDay, stuckStray, &fakeEvents{})
	if first := e.run(Options{}); first.Plan != PlanFullWalk {
		b.Fatalf("first run without webhooks: %+v", first)
	}
	e.advance(1)
	var sum, full *Summary
	for b.Loop() {
		sum = e.run(Options{})
		var err error
		if full, err = e.runner(nil, Options{}).Run(context.Background(), sum.Window); err != nil {
			b.Fatal(err)
		}
	}
	if sum.Plan != PlanWalk || sum.Confirmed != 1 || !sum.Consistent || full.Plan != PlanFullWalk {
		b.Fatalf("summary %+v\nfull walk %+v", sum, full)
	}
	b.ReportMetric(float64(sum.Calls), "calls")
	b.ReportMetric(float64(sum.MinCalls), "calls-minimum")
	b.ReportMetric(float64(full.Calls), "calls-full-walk")
	b.ReportMetric(float64(full.Calls)/float64(sum.Calls), "x-fewer")
	b.Logf("calls %d (minimum %d) against the full walk's %d; window %s; %s: %s",
		sum.Calls, sum.MinCalls, full.Calls, sum.Window, sum.Plan, sum.PlanReason)
}
