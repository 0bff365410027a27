package submit

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/delayproxy"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/sandbox"
)

// PostgreSQL at a distance (issue 31): the backend benchmark's submit on
// bbolt, then on PostgreSQL over TCP with PostgreSQL's durable defaults
// (fsync and synchronous_commit on), reached directly and through
// internal/delayproxy adding 0.5 ms and 1 ms each way, in one run. It
// reports, besides rows/s and the ratio to bbolt, roundtrips/row: the
// requests the ledger waited on, per row, as the proxy counts them
// (delayproxy.Proxy.Trips); and logs how long the proxy held each chunk
// in fact.
// The proxy runs in a process of its own (delayproxy.StartProcess), as a
// network would, taking nothing from this process's scheduler.
var distanceDelays = []time.Duration{0, 500 * time.Microsecond, time.Millisecond}

func BenchmarkSubmitDistance(b *testing.B) {
	srv, err := pgtest.NewTCPServer("fsync=on", "synchronous_commit=on", "full_page_writes=on")
	if err != nil {
		b.Fatalf("pgtest: %v", err)
	}
	defer srv.Close()
	backends := []ledgerBackend{benchBackends(b)[0]} // bbolt
	for _, d := range distanceDelays {
		backends = append(backends, ledgerBackend{name: fmt.Sprintf("pg-tcp+%s", d), open: func(b *testing.B) benchLedger {
			return openDistantLedger(b, srv, d)
		}})
	}
	rates := []struct {
		name string
		s    benchSetup
	}{
		{"unlimited", benchSetup{rows: *backendRows, concurrency: 64, sandbox: sandbox.Options{Latency: benchLatency}}},
		{"rate=200", benchSetup{rows: *backendRows, rate: benchRate, burst: benchBurst, concurrency: *backendWorkers, sandbox: sandbox.Options{Latency: benchLatency, RateLimit: benchRate}}},
	}
	for _, r := range rates {
		b.Run(r.name, func(b *testing.B) {
			var bboltRate float64
			for _, be := range backends {
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

// openDistantLedger is openPostgresLedger on srv over TCP, through a
// proxy adding delay each way.
func openDistantLedger(b *testing.B, srv *pgtest.Server, delay time.Duration) benchLedger {
	proxy, err := delayproxy.StartProcess(srv.TCPAddr(), delay)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { proxy.Close() })
	name := fmt.Sprintf("dist_%d_%d", os.Getpid(), pgDBSeq.Add(1))
	l := openLedgerIn(b, &pgServer{dsn: srv.DSN("postgres"), newDSN: srv.DSN}, name, pgtest.TCPDSN(proxy.Addr(), name))
	l.proxy = proxy
	return l
}
