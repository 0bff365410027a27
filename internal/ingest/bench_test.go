package ingest

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// benchRows sizes BenchmarkIngest's generated file. The default keeps
// `go test -bench .` short; the recorded figures (docs/benchmarks.md) use
// -ingest.rows 1000000 with -benchtime 1x.
var benchRows = flag.Int("ingest.rows", 100_000, "rows in BenchmarkIngest's generated payment file")

// BenchmarkIngest compares, in one run and on one generated file, ingest
// (parse, validate and commit to the ledger, fsync on) against gocsv
// merely decoding the same file into a plain struct, the baseline.
// Sub-benchmarks:
//
//   - gocsv-decode: the baseline alone;
//   - parse: parse and validate, rows dropped (what the ledger adds is the
//     difference from ingest);
//   - ingest: the measured operation.
//
// parse and ingest each report x_gocsv, their time over that of a gocsv
// decode run just before each iteration (see paired).
//
// The ingest is the pickup job's own code from the spooled file on:
// BeginBatch, Job.parse (csvfile.Parse feeding Loader.Add and the rejects
// report) and Loader.Commit. The SFTP download and the remote move are
// not part of it. Each iteration starts from an empty ledger, opened and
// removed outside the timer.
func BenchmarkIngest(b *testing.B) {
	rows := *benchRows
	src := filepath.Join(b.TempDir(), "payments.csv")
	size := writeSample(b, src, rows)

	b.Run("gocsv-decode", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if n := gocsvDecode(b, src); n != rows {
				b.Fatalf("gocsv decoded %d rows, want %d", n, rows)
			}
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("parse", func(b *testing.B) {
		paired(b, src, rows, size, parseOnce)
	})
	b.Run("ingest", func(b *testing.B) {
		paired(b, src, rows, size, ingestOnce)
	})
}

// paired runs op b.N times and, before each run and outside the timer,
// one gocsv decode of the same file. It reports op's time as a multiple
// of the decode's (x_gocsv): measured back to back, the two share the
// machine's state of the moment, which matters on a shared machine.
func paired(b *testing.B, src string, rows int, size int64, op func(*testing.B, string, int)) {
	b.SetBytes(size)
	b.ReportAllocs()
	var base time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		start := time.Now()
		if n := gocsvDecode(b, src); n != rows {
			b.Fatalf("gocsv decoded %d rows, want %d", n, rows)
		}
		base += time.Since(start)
		b.StartTimer()
		op(b, src, rows)
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.Elapsed())/float64(base), "x_gocsv")
}

// parseOnce parses and validates src with the job's parser options and
// drops the rows: the ingest without the ledger, to show what the commit
// adds.
func parseOnce(b *testing.B, src string, rows int) {
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	j := New(nil, Options{TestMode: true, Now: benchNow})
	sum, err := csvfile.Parse(in, j.ParseOptions(), func(csvfile.Payment) error { return nil }, nil)
	if err != nil || sum.Valid != rows {
		b.Fatalf("summary %+v, err %v", sum, err)
	}
}

// ingestOnce loads src into a fresh ledger as the pickup job does. Only
// the load itself is timed.
func ingestOnce(b *testing.B, src string, rows int) {
	b.StopTimer()
	dir, err := os.MkdirTemp(b.TempDir(), "ledger-")
	if err != nil {
		b.Fatal(err)
	}
	db, err := state.Open(filepath.Join(dir, "state"), state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	j := New(db, Options{TestMode: true, SpoolDir: dir, Now: benchNow})
	fi, err := os.Stat(src)
	if err != nil {
		b.Fatal(err)
	}
	b.StartTimer()

	loader, err := db.BeginBatch(payment.FileMeta{Name: "payments.csv", SHA256: "bench", Size: fi.Size()})
	if err != nil {
		b.Fatal(err)
	}
	rej, sum, err := j.parse(context.Background(), src, loader, nil, payment.KindPayments)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := loader.Commit(sum.Rows, sum.Invalid); err != nil {
		b.Fatal(err)
	}

	b.StopTimer()
	if sum.Valid != rows || sum.Invalid != 0 {
		b.Fatalf("summary %+v, want %d valid rows", sum, rows)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	os.Remove(rej)
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
}

// benchNow is a fixed run date, so that the generated file's rows (which
// carry no authorization_date) are judged the same on every run.
func benchNow() time.Time { return time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC) }

// writeSample writes the repository's generated sample of rows valid rows
// to path and returns its size.
func writeSample(b *testing.B, path string, rows int) int64 {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := csvfile.WriteSample(f, rows, 1); err != nil {
		f.Close()
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// gocsvDecode is the baseline: csvfile.DecodeBaseline over the file.
func gocsvDecode(b *testing.B, path string) int {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	n, err := csvfile.DecodeBaseline(f)
	if err != nil {
		b.Fatal(err)
	}
	return n
}
