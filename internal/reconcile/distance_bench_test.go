package reconcile

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/delayproxy"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/state/postgres"
	"github.com/batchd/batchd/internal/throttle"
)

// The benchmark's ledger: 20,000 checks in 10 batches, reconciled at
// api.rate 200 (200 pages, a paging floor of 0.995 s).
const (
	distanceChecks  = 20_000
	distanceBatches = 10
	distanceRate    = 200.0
)

var reconcileDelays = []time.Duration{0, 500 * time.Microsecond, time.Millisecond}

// statementsFlag loads pg_stat_statements into the benchmark's server and
// logs, after each PostgreSQL run, the statements the server spent the
// most time on in it: where the time of a run above bbolt's goes.
var statementsFlag = flag.Bool("reconcile.statements", false, "log each PostgreSQL run's costliest statements (pg_stat_statements)")

// BenchmarkReconcileDistance measures PostgreSQL at a distance (issue
// 31): reconcile of distanceChecks checks at api.rate distanceRate on
// bbolt, then on PostgreSQL 15 over TCP with PostgreSQL's durable defaults (fsync, synchronous_commit and
// full_page_writes on), reached through internal/delayproxy adding no
// delay ("direct": the proxy only counts), 0.5 ms and 1 ms each way, in
// one run. Every ledger holds the same rows: the checks are created once
// at a sandbox process and recorded in the bbolt ledger, the same results
// are replayed into one PostgreSQL database, and each PostgreSQL backend
// runs on a copy of it (CREATE DATABASE ... TEMPLATE); every row is
// compared with bbolt's before each run. It runs every backend twice:
// "still", where the service shows each check in the status its row
// records (the ledger only reads), then "moved", after every check is
// deposited at the service, where each page's status changes are written
// (ObserveStatuses of 100 rows a page).
//
// Per backend it reports x-floor (the run's time over the paging floor,
// (pages-1)/rate s), pages/s, x-bbolt (the run's time over bbolt's),
// roundtrips/check (the requests the ledger waited on during the run, as
// the proxy counts them: delayproxy.Proxy.Trips, per check) and
// ledger-calls/check (reconcile's calls into the ledger, per check), and
// logs those calls by method, how long the proxy held each chunk in fact,
// and the CPU time of each process. The proxy runs in a process of its
// own (delayproxy.StartProcess), as a network would, taking nothing from
// this process's scheduler. -reconcile.statements logs each PostgreSQL
// run's costliest statements. The figures in docs/benchmarks.md are of
// -benchtime 1x: one run per ledger, as a day's reconcile runs once.
func BenchmarkReconcileDistance(b *testing.B) {
	url, sandboxPID := startSandboxProcess(b)
	settings := []string{"fsync=on", "synchronous_commit=on", "full_page_writes=on"}
	if *statementsFlag {
		settings = append(settings, "shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all")
	}
	srv, err := pgtest.NewTCPServer(settings...)
	if err != nil {
		b.Fatalf("pgtest: %v", err)
	}
	b.Cleanup(func() { srv.Close() }) // after the databases' cleanups
	if *statementsFlag {
		pgExec(b, srv, "CREATE EXTENSION pg_stat_statements")
	}
	start := time.Now()
	bolt := distanceBolt(b, url)
	checks := createDistanceChecks(bolt)
	tmpl := distanceTemplate(b, srv, bolt, checks)
	want := ledgerLines(b, bolt.db)
	b.Logf("setup: %d checks created, recorded in bbolt and in a PostgreSQL template in %s",
		distanceChecks, time.Since(start).Round(time.Second))
	backends := []distantLedger{{name: "bbolt", open: func(*testing.B) (*state.DB, *delayproxy.Remote) { return bolt.db, nil }}}
	for _, d := range reconcileDelays {
		backends = append(backends, distantLedger{name: fmt.Sprintf("pg-tcp+%s", d), open: func(b *testing.B) (*state.DB, *delayproxy.Remote) {
			return openDistantCopy(b, srv, tmpl, d)
		}})
	}
	for _, moved := range []bool{false, true} {
		name := "still"
		if moved {
			name = "moved"
			depositAll(bolt, checks)
		}
		b.Run(name, func(b *testing.B) {
			var boltTime time.Duration
			for _, be := range backends {
				b.Run(be.name, func(b *testing.B) {
					db, proxy := be.open(b)
					sameLedger(b, ledgerLines(b, db), want)
					var stmts *pgtest.Server
					if *statementsFlag && proxy != nil {
						stmts = srv
					}
					elapsed := runDistance(b, url, sandboxPID, db, proxy, moved, stmts)
					if be.name == "bbolt" {
						boltTime = elapsed
					} else if boltTime > 0 {
						b.ReportMetric(float64(elapsed)/float64(boltTime), "x-bbolt")
					}
				})
			}
		})
	}
}

// depositAll marks every check of the benchmark deposited at the
// sandbox, so that a run then records a status change on every row: a
// page's ObserveStatuses writes 100 rows, where before the deposit it
// wrote none.
func depositAll(e *env, checks map[payment.RowKey]payment.CheckResult) {
	ids := make([]string, 0, len(checks))
	for _, c := range checks {
		ids = append(ids, c.CheckID)
	}
	for part := range slices.Chunk(ids, 1000) {
		e.deposit(part...)
	}
}

// distantLedger is a backend of the benchmark: open returns its ledger,
// and the proxy in front of its server (nil for bbolt).
type distantLedger struct {
	name string
	open func(*testing.B) (*state.DB, *delayproxy.Remote)
}

// meanHeld is how long p held each chunk it sent (both ways) since the
// counts held0 and chunks0: the delay a run was measured at in fact.
func meanHeld(p *delayproxy.Remote, held0 time.Duration, chunks0 int64) time.Duration {
	up, down := p.Chunks()
	if n := up + down - chunks0; n > 0 {
		return ((p.Held() - held0) / time.Duration(n)).Round(time.Microsecond)
	}
	return 0
}

// runDistance reconciles db once at distanceRate and reports the run;
// moved: every check's status at the service differs from its row's.
func runDistance(b *testing.B, url string, sandboxPID int, db *state.DB, proxy *delayproxy.Remote, moved bool, stmts *pgtest.Server) time.Duration {
	api, err := echeck.New(apiwire.Options{BaseURL: url, Key: testKey, Limiter: throttle.New(distanceRate, 1)})
	if err != nil {
		b.Fatal(err)
	}
	now := (&clock{t: monday()}).Now
	counted := newCountedLedger(db)
	marks := &milestones{at: map[string]time.Time{}}
	r, err := New(counted, echeck.NewService(api), Options{ReportsDir: b.TempDir(), Now: now, Logger: slog.New(marks)})
	if err != nil {
		b.Fatal(err)
	}
	load0 := loadAverage()
	var trips0, chunks0 int64
	var held0 time.Duration
	if proxy != nil {
		trips0, held0 = proxy.Trips(), proxy.Held()
		up, down := proxy.Chunks()
		chunks0 = up + down
	}
	var sum *Summary
	if stmts != nil {
		pgExec(b, stmts, "SELECT pg_stat_statements_reset()")
	}
	cpu0 := cpuNow(b, sandboxPID, proxy)
	b.ResetTimer()
	for b.Loop() {
		if sum, err = r.Run(context.Background(), Window{}); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := b.Elapsed() / time.Duration(b.N)
	b.StopTimer()
	cpu := cpuNow(b, sandboxPID, proxy).since(cpu0)
	pages := distanceChecks / DefaultPageSize
	changes := 0
	if moved {
		changes = distanceChecks
	}
	// A second run (-benchtime above 1x) finds the changes recorded.
	if sum.ChecksSeen != distanceChecks || sum.Matched != distanceChecks || sum.PagesRead != pages || sum.StatusRows != distanceChecks ||
		(b.N == 1 && sum.StatusChanges != changes) {
		b.Fatalf("summary %+v", sum)
	}
	floor := time.Duration(float64(pages-1) / distanceRate * float64(time.Second))
	perCheck := func(n int64) float64 { return float64(n) / float64(b.N) / distanceChecks }
	b.ReportMetric(float64(elapsed)/float64(floor), "x-floor")
	b.ReportMetric(float64(sum.PagesRead)/elapsed.Seconds(), "pages/s")
	b.ReportMetric(perCheck(counted.total()), "ledger-calls/check")
	if proxy != nil {
		b.ReportMetric(perCheck(proxy.Trips()-trips0), "roundtrips/check")
		b.Logf("the proxy held each chunk %s on average", meanHeld(proxy, held0, chunks0))
	}
	b.Logf("elapsed %s, floor %s; %s; load average %s before, %s after; %s; ledger calls: %s",
		elapsed.Round(time.Millisecond), floor, marks, load0, loadAverage(), cpu, counted)
	if stmts != nil {
		b.Logf("the server's costliest statements in the run:\n%s", costliest(b, stmts))
	}
	if proxy != nil {
		b.Logf("alone: %s", callTrips(b, db, func() int64 { return proxy.Trips() }))
	}
	return elapsed
}

// callTrips measures, one call at a time after the run, the round trips
// of the ledger calls that a run makes for its checks: OwnerRows of one
// page of check ids (per page), Rows of one batch (the status report's
// pass), and TrackedRows stopped at its first row (the default window).
func callTrips(b *testing.B, db *state.DB, trips func() int64) string {
	bs, err := db.Batches()
	if err != nil || len(bs) == 0 {
		b.Fatalf("batches: %v", err)
	}
	var ids []string
	t0 := trips()
	err = db.Rows(bs[0].ID, func(r *payment.Row) (bool, error) {
		if len(ids) < DefaultPageSize {
			ids = append(ids, r.CheckID)
		}
		return true, nil
	})
	rows := trips() - t0
	if err != nil {
		b.Fatal(err)
	}
	t0 = trips()
	if _, err := db.OwnerRows(ids); err != nil {
		b.Fatal(err)
	}
	owners := trips() - t0
	t0 = trips()
	// The default window's first read (oldestOpen): it stops at the
	// first row, as it does here, where every batch is a day old.
	if err := db.TrackedRows(func(*payment.Row) (bool, error) { return false, nil }); err != nil {
		b.Fatal(err)
	}
	return fmt.Sprintf("OwnerRows of %d check ids: %d round trips; Rows of a batch of %d rows: %d; TrackedRows stopped at its first row: %d",
		len(ids), owners, bs[0].Rows, rows, trips()-t0)
}

// milestones is a log handler that notes when a run first logged each
// message, to tell the time the walk took from the time the rest of the
// run (the status report's pass, the reports) took after it.
type milestones struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (h *milestones) Enabled(context.Context, slog.Level) bool { return true }
func (h *milestones) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *milestones) WithGroup(string) slog.Handler            { return h }

func (h *milestones) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.at[r.Message]; !ok {
		h.at[r.Message] = r.Time
	}
	return nil
}

// String says when the walk ended and the run finished, from its start.
func (h *milestones) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	start := h.at["reconcile started"]
	since := func(msg string) time.Duration { return h.at[msg].Sub(start).Round(time.Millisecond) }
	return fmt.Sprintf("walk over %s, run finished %s after the start", since("check list read"), since("reconcile finished"))
}

// loadAverage is the machine's 1, 5 and 15 minute load averages, to set
// beside a figure taken on a shared machine.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(raw)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// createDistanceChecks creates the benchmark's checks at e's sandbox,
// records them in e's ledger, and returns what was recorded of each row.
func createDistanceChecks(e *env) map[payment.RowKey]payment.CheckResult {
	out := make(map[payment.RowKey]payment.CheckResult, distanceChecks)
	var mu sync.Mutex
	for i := range distanceBatches {
		bt := e.load(fmt.Sprintf("dist-%d.csv", i), distancePayments(i)...)
		e.recordBatch(bt, 64, func(row *payment.Row) (payment.CheckResult, error) {
			c, err := e.api.CreateCheck(context.Background(), request(row))
			if err != nil {
				return payment.CheckResult{}, err
			}
			mu.Lock()
			out[row.Key] = created(c)
			mu.Unlock()
			return created(c), nil
		})
	}
	return out
}

// distancePayments are the payments of batch i, labelled by the file
// (a column of it): without, a row takes its batch's label, which names
// the ledger's instance, and the checks would differ from the rows of
// every ledger but the first.
func distancePayments(i int) []payment.Payment {
	ps := manyPayments(distanceChecks / distanceBatches)
	for j := range ps {
		ps[j].Label = fmt.Sprintf("dist-%d", i)
	}
	return ps
}

// replayChecks loads into e's ledger the batches createDistanceChecks
// loaded, and records in it the same checks, none created anew.
func replayChecks(e *env, checks map[payment.RowKey]payment.CheckResult) {
	for i := range distanceBatches {
		bt := e.load(fmt.Sprintf("dist-%d.csv", i), distancePayments(i)...)
		e.recordBatch(bt, 64, func(row *payment.Row) (payment.CheckResult, error) {
			res, ok := checks[row.Key]
			if !ok {
				return res, fmt.Errorf("no check was created for %s", row.Key)
			}
			return res, nil
		})
	}
}

var distanceDBSeq atomic.Int64

// distanceOptions are every ledger's options: the same send window on
// each (PostgreSQL's default), so that the rows are the same.
func distanceOptions(c *clock) state.Options {
	return state.Options{Now: c.Now, SendWindow: config.DefaultLeaseTTL / 3}
}

// distanceBolt is newEnvAt's env on a bbolt ledger with distanceOptions.
func distanceBolt(b *testing.B, url string) *env {
	api, err := echeck.New(apiwire.Options{BaseURL: url, Key: testKey})
	if err != nil {
		b.Fatal(err)
	}
	c := &clock{t: monday()}
	db := ledgertest.OpenBolt(b, b.TempDir(), distanceOptions(c))
	return &env{t: b, url: url, api: api, svc: echeck.NewService(api), db: db, clock: c, dir: b.TempDir()}
}

// distanceTemplate makes a database on srv holding the rows of bolt's
// ledger, replayed, for openDistantCopy to copy, and returns its name.
func distanceTemplate(b *testing.B, srv *pgtest.Server, bolt *env, checks map[payment.RowKey]payment.CheckResult) string {
	name := fmt.Sprintf("rdist_%d_%d", os.Getpid(), distanceDBSeq.Add(1))
	pgExec(b, srv, "CREATE DATABASE "+name)
	b.Cleanup(func() { pgExec(b, srv, "DROP DATABASE "+name+" WITH (FORCE)") })
	replayInto(b, srv.DSN(name), bolt.clock, checks)
	// A reconcile runs a day after the submit that wrote its rows, by
	// when autovacuum has visited kv_keys; a copy of a template just
	// written would have the run read past every dead version and set
	// every hint bit, ten times slower (docs/benchmarks.md).
	pgExec(b, srv, "VACUUM ANALYZE", name)
	return name
}

// replayInto replays the checks into the ledger at dsn as its leader,
// and closes it with the lease given up, as a template must be: a copy
// takes the lease afresh, and nothing may be connected to a template.
func replayInto(b *testing.B, dsn string, c *clock, checks map[payment.RowKey]payment.CheckResult) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store, err := postgres.Open(ctx, dsn, postgres.Options{Fencing: true})
	if err != nil {
		b.Fatalf("open the template: %v", err)
	}
	db, err := state.OpenStore(store, store.Elector(), distanceOptions(c))
	if err != nil {
		store.Close()
		b.Fatalf("open the template: %v", err)
	}
	defer db.Close()
	if li, err := db.Lead(ctx, ledgertest.LeaseTTL); err != nil || !li.Self {
		b.Fatalf("take the template's lease: %v (%s)", err, li)
	}
	replayChecks(&env{t: b, db: db, clock: c}, checks)
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := db.Resign(ctx); err != nil {
		b.Fatal(err)
	}
}

// openDistantCopy opens, through a proxy adding delay each way, a copy of
// the template database on srv, dropped when b ends, and returns its
// ledger (lease taken) and the proxy.
func openDistantCopy(b *testing.B, srv *pgtest.Server, tmpl string, delay time.Duration) (*state.DB, *delayproxy.Remote) {
	name := fmt.Sprintf("rdist_%d_%d", os.Getpid(), distanceDBSeq.Add(1))
	pgExec(b, srv, "CREATE DATABASE "+name+" TEMPLATE "+tmpl)
	b.Cleanup(func() { pgExec(b, srv, "DROP DATABASE "+name+" WITH (FORCE)") })
	proxy, err := delayproxy.StartProcess(srv.TCPAddr(), delay)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { proxy.Close() })
	db := ledgertest.OpenPostgres(b, pgtest.TCPDSN(proxy.Addr(), name), distanceOptions(&clock{t: monday()}))
	return db, proxy
}

// pgExec runs one statement in srv's postgres database, or in the
// database named.
func pgExec(b *testing.B, srv *pgtest.Server, sql string, database ...string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db := "postgres"
	if len(database) > 0 {
		db = database[0]
	}
	c, err := pgx.Connect(ctx, srv.DSN(db))
	if err != nil {
		b.Fatalf("%s: %v", sql, err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, sql); err != nil {
		b.Fatalf("%s: %v", sql, err)
	}
}

// ledgerLines is every batch and row of db, one JSON object each, so
// that the benchmark can show that each backend reconciles the same
// ledger.
func ledgerLines(b *testing.B, db *state.DB) []string {
	b.Helper()
	bs, err := db.Batches()
	if err != nil {
		b.Fatal(err)
	}
	var out []string
	add := func(v any) error {
		raw, err := json.Marshal(v)
		out = append(out, string(raw))
		return err
	}
	for _, bt := range bs {
		bt.Label = "" // it names the ledger's instance
		if err := add(bt); err != nil {
			b.Fatal(err)
		}
		if err := db.Rows(bt.ID, func(r *payment.Row) (bool, error) { return true, add(r) }); err != nil {
			b.Fatal(err)
		}
	}
	return out
}

// sameLedger fails b unless got holds want's lines, naming the fields of
// the first that differs (not their values: rows hold account numbers).
func sameLedger(b *testing.B, got, want []string) {
	b.Helper()
	if len(got) != len(want) {
		b.Fatalf("%d batches and rows, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] == want[i] {
			continue
		}
		var g, w map[string]any
		_ = json.Unmarshal([]byte(got[i]), &g)
		_ = json.Unmarshal([]byte(want[i]), &w)
		var fields []string
		for k := range w {
			if fmt.Sprint(g[k]) != fmt.Sprint(w[k]) {
				fields = append(fields, k)
			}
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				fields = append(fields, k)
			}
		}
		sort.Strings(fields)
		b.Fatalf("entry %d of the ledger differs from bbolt's in %s", i, strings.Join(fields, ", "))
	}
}

// cpuSplit is the CPU time used so far by this process, the sandbox
// process, the delay proxy's and every PostgreSQL process (server and
// backends, by the command name in /proc), to say whose work a run's
// time above the floor was on two shared cores. A backend that ends
// between two readings takes its time with it: the pool's backends live
// through a run.
type cpuSplit struct{ self, sandbox, proxy, postgres time.Duration }

// cpuNow reads the CPU times; proxy is the proxy's process, if any.
func cpuNow(b *testing.B, sandboxPID int, proxy *delayproxy.Remote) cpuSplit {
	c := cpuSplit{self: childCPU(b, os.Getpid()), sandbox: childCPU(b, sandboxPID)}
	if proxy != nil {
		c.proxy = childCPU(b, proxy.Pid())
	}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && strings.TrimSpace(string(comm)) == "postgres" {
			if raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
				c.postgres += ticks(raw)
			}
		}
	}
	return c
}

// since is the CPU time used between c0 and c, as the benchmark logs it.
func (c cpuSplit) since(c0 cpuSplit) string {
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }
	return fmt.Sprintf("CPU during the run: this process %s, sandbox %s, delay proxy %s, postgres %s",
		r(c.self-c0.self), r(c.sandbox-c0.sandbox), r(c.proxy-c0.proxy), r(c.postgres-c0.postgres))
}

// costliest lists the statements srv spent the most time executing since
// pg_stat_statements was last reset: calls, rows, total and mean time.
func costliest(b *testing.B, srv *pgtest.Server) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, srv.DSN("postgres"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(context.Background())
	rows, err := c.Query(ctx, `SELECT calls, rows, total_exec_time, left(regexp_replace(query, '\s+', ' ', 'g'), 110)
		FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12`)
	if err != nil {
		b.Fatal(err)
	}
	var out strings.Builder
	var calls, n int64
	var total float64
	var query string
	_, err = pgx.ForEachRow(rows, []any{&calls, &n, &total, &query}, func() error {
		fmt.Fprintf(&out, "  %6d calls %7d rows %8.1f ms (%.3f ms each): %s\n", calls, n, total, total/float64(calls), query)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return out.String()
}
