package submit

import (
	"context"
	"flag"
	"fmt"
	"github.com/batchd/batchd/internal/delayproxy"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/state/kv"
	"github.com/batchd/batchd/internal/state/postgres"
	"github.com/batchd/batchd/internal/throttle"
)

// The ledger-backend benchmarks (issue 19): the same submit run on a bbolt
// file and on a PostgreSQL database, back to back in one process, so the
// ratio between them is measured under the same load of the machine.
var (
	backendRows = flag.Int("submit.backend.rows", 2_000, "rows each BenchmarkSubmitBackend run submits")
	// backendWorkers is api.concurrency at api.rate 200: 16 as in submit
	// (a). Each row holds a worker for two ledger commits and the request,
	// so a slower ledger needs more workers to spend the same budget.
	backendWorkers = flag.Int("submit.backend.workers", 16, "workers of BenchmarkSubmitBackend at api.rate 200")
	backendPG      = flag.String("submit.backend.pg", "", "URL DSN of a PostgreSQL server on which the backend benchmarks "+
		"create (and drop) a database per run, e.g. one with fsync on or synchronous replication; "+
		"empty: a private pgtest server, which runs with fsync off")
)

const (
	// benchLeaseTTL outlasts any benchmark run: the lease is taken once
	// per ledger and never renewed.
	benchLeaseTTL = 10 * time.Minute
	// benchSendWindow is state.send_window's default (a third of the
	// default 15 s lease): the send-by deadline the PostgreSQL ledger
	// records, as jobs.OpenLedger sets it.
	benchSendWindow = 5 * time.Second
)

// ledgerBackend opens a fresh, empty ledger that this process leads.
type ledgerBackend struct {
	name string
	open func(b *testing.B) benchLedger
}

// benchLedger is an open ledger and, on PostgreSQL, the count of key
// operations the rules made on its store: each is a statement, a round
// trip to the server.
type benchLedger struct {
	*state.DB
	ops   *kvOps             // nil on bbolt, whose store is the file
	proxy *delayproxy.Remote // the delay proxy in front of the server; nil without one
}

// kvOps counts key operations: reads (Get, cursor moves) and writes (Put,
// Delete).
type kvOps struct{ reads, writes atomic.Int64 }

// benchBackends are bbolt (a file in a temporary directory, fsync on every
// commit) and PostgreSQL (a database of its own per ledger, opened as
// jobs.OpenLedger opens it: fenced, send window set, lease taken).
func benchBackends(b *testing.B) []ledgerBackend {
	return []ledgerBackend{
		{name: "bbolt", open: func(b *testing.B) benchLedger {
			db, err := state.Open(b.TempDir(), state.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			return benchLedger{DB: db}
		}},
		{name: "postgres", open: openPostgresLedger},
	}
}

// pgServer is the server the PostgreSQL ledgers live on: -submit.backend.pg,
// or a private pgtest server.
type pgServer struct {
	dsn    string                 // a database to connect to for CREATE/DROP DATABASE
	newDSN func(db string) string // the DSN of database db
	own    *pgtest.Server         // the pgtest server, nil for -submit.backend.pg
}

// benchPG is the server of the running top-level benchmark; benchmarks
// run one at a time.
var (
	benchPG *pgServer
	pgDBSeq atomic.Int64
)

// benchServer returns the benchmark's PostgreSQL server, started on first
// use; stopBenchServer stops it when the top-level benchmark ends.
func benchServer(b *testing.B) *pgServer {
	if benchPG != nil {
		return benchPG
	}
	if *backendPG != "" {
		u, err := url.Parse(*backendPG)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			b.Fatal("-submit.backend.pg: want a postgres:// URL (not shown: it may hold a password)")
		}
		benchPG = &pgServer{dsn: *backendPG, newDSN: func(db string) string {
			v := *u
			v.Path = "/" + db
			return v.String()
		}}
		return benchPG
	}
	srv, err := pgtest.NewServer()
	if err != nil {
		b.Fatalf("pgtest: %v", err)
	}
	benchPG = &pgServer{dsn: srv.DSN("postgres"), newDSN: srv.DSN, own: srv}
	return benchPG
}

// stopBenchServer stops a pgtest server benchServer started.
func stopBenchServer(b *testing.B) {
	if benchPG != nil && benchPG.own != nil {
		if err := benchPG.own.Close(); err != nil {
			b.Errorf("pgtest: %v", err)
		}
	}
	benchPG = nil
}

// exec runs one statement on the server's maintenance database.
func (s *pgServer) exec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.dsn)
	if err != nil {
		return fmt.Errorf("connect to the benchmark server: %w", err)
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, sql)
	return err
}

// openPostgresLedger creates a database for one ledger (dropped at
// cleanup), opens the ledger on it with fencing on, and takes the lease,
// without which every fenced write is refused.
func openPostgresLedger(b *testing.B) benchLedger {
	srv := benchServer(b)
	name := fmt.Sprintf("bench_%d_%d", os.Getpid(), pgDBSeq.Add(1))
	return openLedgerIn(b, srv, name, srv.newDSN(name))
}

// openLedgerIn creates database name on srv (dropped at cleanup), opens a
// fenced ledger on it through dsn, and takes the lease, without which
// every fenced write is refused.
func openLedgerIn(b *testing.B, srv *pgServer, name, dsn string) benchLedger {
	if err := srv.exec("CREATE DATABASE " + name); err != nil {
		b.Fatalf("create database %s: %v", name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := postgres.Open(ctx, dsn, postgres.Options{Fencing: true})
	if err != nil {
		b.Fatal(err)
	}
	counted := &countingStore{Store: store, ops: new(kvOps)}
	// The watermark file too, as jobs.OpenLedger keeps it (jobs imports
	// this package, hence the name spelled out): every commit
	// writes and syncs it.
	db, err := state.OpenStore(counted, benchElector{store}, state.Options{SendWindow: benchSendWindow,
		Watermark: filepath.Join(b.TempDir(), "ledger-watermark")})
	if err != nil {
		store.Close()
		b.Fatal(err)
	}
	// Cleanups run last-in first-out: the ledger closes before its
	// database is dropped.
	b.Cleanup(func() {
		if err := srv.exec("DROP DATABASE " + name + " WITH (FORCE)"); err != nil {
			b.Errorf("drop database %s: %v", name, err)
		}
	})
	b.Cleanup(func() { db.Close() })
	if li, err := db.Lead(ctx, benchLeaseTTL); err != nil || !li.Self {
		b.Fatalf("take the lease: %v (%s)", err, li)
	}
	return benchLedger{DB: db, ops: counted.ops}
}

// benchElector is jobs' elector adapter (internal/jobs/open.go): the
// store's lease in the ledger's words.
type benchElector struct{ s *postgres.Store }

func (e benchElector) TryLead(ctx context.Context, holder string, ttl time.Duration) (state.LeaderInfo, error) {
	li, err := e.s.TryLead(ctx, holder, ttl)
	return benchLeaderInfo(li), err
}

func (e benchElector) Leader(ctx context.Context) (state.LeaderInfo, error) {
	li, err := e.s.Leader(ctx)
	return benchLeaderInfo(li), err
}

func (e benchElector) Resign(ctx context.Context) error { return e.s.Resign(ctx) }

func benchLeaderInfo(li postgres.LeaderInfo) state.LeaderInfo {
	return state.LeaderInfo{Holder: li.Holder, Epoch: li.Epoch, Expires: li.Expires, Self: li.Self, Shared: true}
}

// BenchmarkSubmitBackend submits the same rows through the same Runner,
// client and sandbox (20 ms latency, loopback HTTP) on each ledger
// backend, at the same api.rate: unlimited (64 workers, where the ledger
// is what limits) and 200/s (16 workers unless -submit.backend.workers,
// burst 20, the sandbox enforcing
// 200/s: the rate budget limits, and the ledger must not). It reports
// rows/s, commits/row (the ledger's committed write transactions per
// row: group commit at work) and, on postgres, x_bbolt: its rows/s over
// bbolt's in the run just before. Loading the rows and opening the
// ledger are outside the timer.
//
// The private PostgreSQL server runs with fsync off (pgtest): the figures
// are round trips and locking, not a disk. -submit.backend.pg points the
// benchmark at another server.
func BenchmarkSubmitBackend(b *testing.B) {
	defer stopBenchServer(b)
	rates := []struct {
		name string
		s    benchSetup
	}{
		{"unlimited", benchSetup{rows: *backendRows, concurrency: 64,
			sandbox: sandbox.Options{Latency: benchLatency}}},
		{"rate=200", benchSetup{rows: *backendRows, rate: benchRate, burst: benchBurst, concurrency: *backendWorkers,
			sandbox: sandbox.Options{Latency: benchLatency, RateLimit: benchRate}}},
	}
	for _, r := range rates {
		b.Run(r.name, func(b *testing.B) {
			var bboltRate float64
			for _, be := range benchBackends(b) {
				b.Run(be.name, func(b *testing.B) {
					perSec := benchSubmitOn(b, r.s, be)
					if be.name == "bbolt" {
						bboltRate = perSec
					} else if bboltRate > 0 {
						b.ReportMetric(perSec/bboltRate, "x_bbolt")
					}
				})
			}
		})
	}
}

// benchSubmitOn runs s b.N times, each on a fresh ledger of be, reports
// the metrics and returns rows/s.
func benchSubmitOn(b *testing.B, s benchSetup, be ledgerBackend) float64 {
	var total benchRun
	var reads, writes, trips, chunks int64
	var held time.Duration
	counted := false
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db := be.open(b)
		loadRows(b, db.DB, s.rows)
		if db.ops != nil {
			counted = true
			reads -= db.ops.reads.Load()
			writes -= db.ops.writes.Load()
		}
		if db.proxy != nil {
			up, down := db.proxy.Chunks()
			trips, chunks, held = trips-db.proxy.Trips(), chunks-up-down, held-db.proxy.Held()
		}
		r := submitOn(b, s, db.DB)
		if db.ops != nil {
			reads += db.ops.reads.Load()
			writes += db.ops.writes.Load()
		}
		if db.proxy != nil {
			up, down := db.proxy.Chunks()
			trips, chunks, held = trips+db.proxy.Trips(), chunks+up+down, held+db.proxy.Held()
		}
		total.created += r.created
		total.elapsed += r.elapsed
		total.commits += r.commits
		total.rateLimited += r.rateLimited
	}
	perSec := float64(total.created) / total.elapsed.Seconds()
	b.ReportMetric(perSec, "rows/s")
	b.ReportMetric(float64(total.commits)/float64(total.created), "commits/row")
	b.ReportMetric(float64(total.rateLimited)/float64(b.N), "rate_limited")
	if s.rate > 0 {
		b.ReportMetric(100*perSec/s.rate, "pct_of_limit")
	}
	if chunks > 0 {
		b.ReportMetric(float64(trips)/float64(total.created), "roundtrips/row")
		b.Logf("the proxy held each chunk %s on average", (held / time.Duration(chunks)).Round(time.Microsecond))
	}
	if counted {
		b.ReportMetric(float64(reads)/float64(total.created), "kv_reads/row")
		b.ReportMetric(float64(writes)/float64(total.created), "kv_writes/row")
	}
	return perSec
}

// submitOn times one Runner.Run over the rows loaded in db, against a new
// sandbox, as runOnce does on a bbolt file.
func submitOn(b *testing.B, s benchSetup, db *state.DB) benchRun {
	sb := sandbox.New(s.sandbox)
	srv := httptest.NewServer(sb)
	defer srv.Close()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = max(s.concurrency, 2)
	lim := throttle.New(s.rate, s.burst)
	api, err := echeck.New(apiwire.Options{BaseURL: srv.URL, Key: benchKey, Timeout: 30 * time.Second,
		HTTPClient: &http.Client{Transport: tr}, Limiter: lim})
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{Concurrency: s.concurrency}
	if s.options != nil {
		opts = s.options(lim)
	}
	run := New(db, echeck.NewService(api), opts)
	commits := db.Commits()

	b.StartTimer()
	start := time.Now()
	sum, err := run.Run(context.Background())
	elapsed := time.Since(start)
	b.StopTimer()

	if err != nil {
		b.Fatal(err)
	}
	if sum.Created != s.rows || sum.Pending+sum.InDoubt+sum.Rejected+sum.Dropped != 0 {
		b.Fatalf("summary %+v, want %d created and nothing else", sum, s.rows)
	}
	if st := sb.Stats(); st.Creates != int64(s.rows) {
		b.Fatalf("the sandbox stored %d checks for %d rows", st.Creates, s.rows)
	}
	return benchRun{created: sum.Created, elapsed: elapsed, commits: db.Commits() - commits, rateLimited: sb.Stats().RateLimited}
}

// BenchmarkLedgerTransition is the ledger's share of a submitted row
// alone, with no HTTP: Send then Created on one row per iteration, from
// 64 goroutines at once (as many as the unlimited submit's workers), on
// each backend. ns/op is wall time per row across all goroutines; rows/s
// and commits/row as above. The rows (b.N of them) are loaded outside the
// timer.
func BenchmarkLedgerTransition(b *testing.B) {
	defer stopBenchServer(b)
	var bboltRate float64
	for _, be := range benchBackends(b) {
		b.Run(be.name, func(b *testing.B) {
			perSec := benchTransitions(b, be)
			if be.name == "bbolt" {
				bboltRate = perSec
			} else if bboltRate > 0 {
				b.ReportMetric(perSec/bboltRate, "x_bbolt")
			}
		})
	}
}

// benchCreated is the check result every transition records: a fixed
// creation time, so that no clock decides anything here.
var benchCreated = time.Date(2026, 11, 2, 15, 0, 0, 0, time.UTC)

func benchTransitions(b *testing.B, be ledgerBackend) float64 {
	db := be.open(b)
	loadRows(b, db.DB, b.N)
	keys := make([]payment.RowKey, 0, b.N)
	if err := db.OpenRows(func(r *payment.Row) (bool, error) {
		keys = append(keys, r.Key)
		return true, nil
	}); err != nil {
		b.Fatal(err)
	}
	if len(keys) != b.N {
		b.Fatalf("%d open rows, loaded %d", len(keys), b.N)
	}
	var next atomic.Int64
	commits := db.Commits()
	var reads, writes int64
	if db.ops != nil {
		reads, writes = db.ops.reads.Load(), db.ops.writes.Load()
	}
	b.SetParallelism(32) // 64 goroutines on 2 cores
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1) - 1
			k := keys[i]
			if _, err := db.Send(k); err != nil {
				b.Error(err)
				return
			}
			res := payment.CheckResult{CheckID: fmt.Sprintf("bench_chk_%d", i), Status: payment.StatusInProcess, Created: benchCreated}
			if _, err := db.Created(k, res); err != nil {
				b.Error(err)
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	perSec := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(perSec, "rows/s")
	b.ReportMetric(float64(db.Commits()-commits)/float64(b.N), "commits/row")
	if db.ops != nil {
		b.ReportMetric(float64(db.ops.reads.Load()-reads)/float64(b.N), "kv_reads/row")
		b.ReportMetric(float64(db.ops.writes.Load()-writes)/float64(b.N), "kv_writes/row")
	}
	return perSec
}

// countingStore counts the key operations made through a kv.Store, to say
// how many statements a row costs on PostgreSQL. The rules make the same
// operations on any store.
type countingStore struct {
	kv.Store
	ops *kvOps
}

func (s *countingStore) wrap(fn func(kv.Tx) error) func(kv.Tx) error {
	return func(tx kv.Tx) error { return fn(countingTx{Tx: tx, ops: s.ops}) }
}

func (s *countingStore) View(fn func(kv.Tx) error) error   { return s.Store.View(s.wrap(fn)) }
func (s *countingStore) Update(fn func(kv.Tx) error) error { return s.Store.Update(s.wrap(fn)) }
func (s *countingStore) Batch(fn func(kv.Tx) error) error  { return s.Store.Batch(s.wrap(fn)) }
func (s *countingStore) UpdateUnfenced(fn func(kv.Tx) error) error {
	return s.Store.UpdateUnfenced(s.wrap(fn))
}

type countingTx struct {
	kv.Tx
	ops *kvOps
}

func (t countingTx) Bucket(name []byte) kv.Bucket {
	bk := t.Tx.Bucket(name)
	if bk == nil {
		return nil
	}
	return countingBucket{Bucket: bk, ops: t.ops}
}

func (t countingTx) CreateBucketIfNotExists(name []byte) (kv.Bucket, error) {
	bk, err := t.Tx.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, err
	}
	return countingBucket{Bucket: bk, ops: t.ops}, nil
}

type countingBucket struct {
	kv.Bucket
	ops *kvOps
}

func (b countingBucket) Get(k []byte) []byte {
	b.ops.reads.Add(1)
	return b.Bucket.Get(k)
}

func (b countingBucket) GetMany(ks [][]byte) [][]byte {
	b.ops.reads.Add(int64(len(ks)))
	return b.Bucket.GetMany(ks)
}

func (b countingBucket) Put(k, v []byte) error {
	b.ops.writes.Add(1)
	return b.Bucket.Put(k, v)
}

func (b countingBucket) Delete(k []byte) error {
	b.ops.writes.Add(1)
	return b.Bucket.Delete(k)
}

func (b countingBucket) Cursor() kv.Cursor {
	return countingCursor{Cursor: b.Bucket.Cursor(), ops: b.ops}
}

type countingCursor struct {
	kv.Cursor
	ops *kvOps
}

func (c countingCursor) First() ([]byte, []byte) {
	c.ops.reads.Add(1)
	return c.Cursor.First()
}

func (c countingCursor) Seek(k []byte) ([]byte, []byte) {
	c.ops.reads.Add(1)
	return c.Cursor.Seek(k)
}

func (c countingCursor) Next() ([]byte, []byte) {
	c.ops.reads.Add(1)
	return c.Cursor.Next()
}

func (c countingCursor) Delete() error {
	c.ops.writes.Add(1)
	return c.Cursor.Delete()
}
