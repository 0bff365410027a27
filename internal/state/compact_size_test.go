package state

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/submit"
	bolt "go.etcd.io/bbolt"
)

// sizeRows is how many rows BenchmarkLedgerBytesPerRow ingests and
// submits. docs/benchmarks.md records runs at 100,000 and 1,000,000.
var sizeRows = flag.Int("ledger.rows", 20_000, "rows of the typical file BenchmarkLedgerBytesPerRow ingests and submits")

// BenchmarkLedgerBytesPerRow measures the ledger's size per row for a
// typical payment file (csvfile's sample, parsed as ingest parses it) at
// three moments: after ingest; after submit (through the production
// client against the sandbox, with api.concurrency's default of 4
// workers), the figure the goal of at most 400 bytes per row is set for;
// and after reconcile has seen every check printed and then deposited
// (recorded as reconcile does, a page of 100 checks per transaction), the
// form in which rows then wait for retention. It reports the file's bytes
// per row after submit, and prints for each moment the file's size, the
// pages in use (bbolt's high-water mark, without the up to 16 MB by which
// bbolt grows the file ahead of need), each bucket and the mean row value.
// One iteration is the whole measurement; the timer means nothing.
func BenchmarkLedgerBytesPerRow(b *testing.B) {
	for b.Loop() {
		m := measureLedger(b, *sizeRows)
		b.ReportMetric(m[1].file/float64(*sizeRows), "bytes/row")
		b.ReportMetric(m[1].used/float64(*sizeRows), "used_bytes/row")
		b.ReportMetric(m[2].file/float64(*sizeRows), "final_bytes/row")
		b.ReportMetric(m[1].value/float64(*sizeRows), "row_value_bytes")
	}
}

// ledgerSize is the ledger at one moment.
type ledgerSize struct {
	file, used, value float64 // bytes: the file, the pages up to the high-water mark, the row values
	report            []string
}

func measureLedger(b *testing.B, rows int) []ledgerSize {
	b.StopTimer()
	defer b.StartTimer()
	d, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	var out []ledgerSize

	var csv bytes.Buffer
	if err := csvfile.WriteSample(&csv, rows, 1); err != nil {
		b.Fatal(err)
	}
	l, err := d.BeginBatch(payment.FileMeta{Name: "typical.csv", SHA256: "typical", Size: int64(csv.Len())})
	if err != nil {
		b.Fatal(err)
	}
	runDate := csvfile.DateOf(time.Now().UTC())
	sum, err := csvfile.Parse(&csv, csvfile.Options{RunDate: runDate, TestMode: true},
		func(p csvfile.Payment) error { return l.Add(p.Line, p.Payment) }, nil)
	if err != nil {
		b.Fatal(err)
	}
	if sum.Valid != rows {
		b.Fatalf("%d of %d sample rows valid", sum.Valid, rows)
	}
	batch, err := l.Commit(sum.Rows, sum.Invalid)
	if err != nil {
		b.Fatal(err)
	}
	out = append(out, sizeOf(b, d, "after ingest", rows).print())

	srv := httptest.NewServer(sandbox.New(sandbox.Options{}))
	defer srv.Close()
	api, err := echeck.New(apiwire.Options{BaseURL: srv.URL, Key: "sk_test_ledger_size_0123456789", Timeout: 30 * time.Second,
		HTTPClient: &http.Client{}})
	if err != nil {
		b.Fatal(err)
	}
	res, err := submit.New(d, echeck.NewService(api), submit.Options{Concurrency: 4}).Run(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if res.Created+res.Rejected != rows {
		b.Fatalf("submit: %+v, want %d rows settled", res, rows)
	}
	out = append(out, sizeOf(b, d, "after submit", rows).print())

	for _, status := range []payment.Status{payment.StatusPrinted, payment.StatusDeposited} {
		var page []payment.Observation
		flush := func() {
			if _, err := d.ObserveStatuses(page, time.Now()); err != nil {
				b.Fatal(err)
			}
			page = page[:0]
		}
		err := d.Rows(batch.ID, func(r *payment.Row) (bool, error) {
			if r.State == payment.Submitted {
				page = append(page, payment.Observation{Key: r.Key, Status: status})
			}
			if len(page) == 100 {
				flush()
			}
			return true, nil
		})
		if err != nil {
			b.Fatal(err)
		}
		flush()
	}
	out = append(out, sizeOf(b, d, "after reconcile (every check deposited)", rows).print())

	// Retention: the batch pruned in its one transaction, its archive
	// written as the daemon writes it (to nowhere, here).
	if err := d.ResultsReported(batch.ID); err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var ms runtime.MemStats
		var top uint64
		for {
			runtime.ReadMemStats(&ms)
			top = max(top, ms.HeapInuse)
			select {
			case <-stop:
				peak <- top
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	// A low GC target while it runs, so that the heap in use follows
	// what prune holds rather than the garbage of decoding every row
	// three times (the sandbox's million checks make the default target
	// hundreds of megabytes).
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var archiveTime time.Duration
	start := time.Now()
	psum, err := d.Prune(context.Background(), time.Now().Add(time.Hour), func(pb *payment.Batch, each func(func(*payment.Row) error) error) error {
		t0 := time.Now()
		defer func() { archiveTime = time.Since(t0) }()
		w := report.NewWriter(io.Discard)
		return each(func(r *payment.Row) error { return w.Write(r.CheckID, r.Number, r.Label, r.Payment.Name) })
	})
	elapsed := time.Since(start)
	close(stop)
	heap := <-peak
	if err != nil || psum.Rows != rows {
		b.Fatalf("prune: %+v, %v", psum, err)
	}
	s := sizeOf(b, d, "after prune", rows)
	s.report[0] += fmt.Sprintf("; prune took %s (archive %s, one transaction), heap in use at most %.0f MB above the %.0f MB before (GOGC 5)",
		elapsed.Round(time.Millisecond), archiveTime.Round(time.Millisecond), float64(heap-min(heap, base.HeapInuse))/(1<<20), float64(base.HeapInuse)/(1<<20))
	out = append(out, s.print())
	return out
}

// sizeOf measures the ledger: the file, what each bucket holds, the free
// pages, the mean row value, and what the same ledger takes compacted.
func sizeOf(b *testing.B, d *DB, moment string, rows int) ledgerSize {
	var s ledgerSize
	st, err := os.Stat(d.Path())
	if err != nil {
		b.Fatal(err)
	}
	s.file = float64(st.Size())
	perRow := func(v float64) float64 { return v / float64(rows) }
	var lines []string
	err = d.file.DB().View(func(tx *bolt.Tx) error {
		pageSize := tx.DB().Info().PageSize
		s.used = float64(tx.Size())
		var names []string
		_ = tx.ForEach(func(name []byte, _ *bolt.Bucket) error { names = append(names, string(name)); return nil })
		sort.Strings(names)
		for _, name := range names {
			bs := tx.Bucket([]byte(name)).Stats()
			pages := bs.LeafPageN + bs.LeafOverflowN + bs.BranchPageN + bs.BranchOverflowN
			if pages == 0 {
				continue
			}
			lines = append(lines, fmt.Sprintf("  bucket %-7s %8d keys, %6d pages: %4.0f bytes/row, leaves %3.0f%% full", name, bs.KeyN, pages,
				perRow(float64(pages*pageSize)), 100*float64(bs.LeafInuse)/float64(max(bs.LeafAlloc, 1))))
		}
		fs := d.file.DB().Stats()
		lines = append(lines, fmt.Sprintf("  free pages %d: %4.0f bytes/row", fs.FreePageN+fs.PendingPageN, perRow(float64((fs.FreePageN+fs.PendingPageN)*pageSize))))
		return tx.Bucket(bucketRows).ForEach(func(k, v []byte) error {
			s.value += float64(len(v))
			return nil
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	// The same ledger compacted: what the data needs without free pages
	// and half-empty ones.
	cpath := filepath.Join(b.TempDir(), "compacted.db")
	dst, err := bolt.Open(cpath, 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Close()
	if err := bolt.Compact(dst, d.file.DB(), 64<<20); err != nil {
		b.Fatal(err)
	}
	var compacted float64
	if err := dst.View(func(tx *bolt.Tx) error { compacted = float64(tx.Size()); return nil }); err != nil {
		b.Fatal(err)
	}
	s.report = append([]string{
		fmt.Sprintf("%s, %d rows: file %.1f MB = %.0f bytes/row; pages in use %.0f bytes/row; compacted %.0f bytes/row; mean row value %.0f bytes",
			moment, rows, s.file/(1<<20), perRow(s.file), perRow(s.used), perRow(compacted), perRow(s.value)),
	}, lines...)
	return s
}

// print prints a moment's report as soon as it is measured (a long run
// that fails later keeps what it measured), rather than logging it: a
// benchmark's log is cut at ten lines.
func (s ledgerSize) print() ledgerSize {
	for _, line := range s.report {
		fmt.Println("    " + line)
	}
	return s
}
