package csvfile

import (
	"bytes"
	"io"
	"runtime"
	"sync"
	"testing"
)

const benchRows = 100_000

var benchData = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	if err := WriteSample(&b, benchRows, 1); err != nil {
		panic(err)
	}
	return b.Bytes()
})

// BenchmarkParse measures Parse, validation included, on a generated file
// of 100k valid rows.
func BenchmarkParse(b *testing.B) {
	data := benchData()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sum, err := Parse(bytes.NewReader(data), testOpts(), func(Payment) error { return nil }, nil)
		if err != nil || sum.Valid != benchRows {
			b.Fatalf("summary %+v, err %v", sum, err)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkGocsvDecode is the baseline: gocsv alone decoding the same bytes
// into a plain struct through its streaming callback, without checks.
func BenchmarkGocsvDecode(b *testing.B) {
	data := benchData()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if n, err := DecodeBaseline(bytes.NewReader(data)); err != nil || n != benchRows {
			b.Fatalf("%d rows, err %v", n, err)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestParseMemoryIsFlat streams a generated file through a pipe and samples
// the live heap while parsing. A parser that kept the file, or the rows, would
// grow with the file; Parse keeps only two small hashes per row.
func TestParseMemoryIsFlat(t *testing.T) {
	const rows = 30_000 // about 3.3 MB of CSV
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(WriteSample(pw, rows, 3)) }()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	sum, err := Parse(pr, testOpts(), func(p Payment) error {
		if p.Line%5000 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		return nil
	}, nil)
	if err != nil || sum.Valid != rows {
		t.Fatalf("summary %+v, err %v", sum, err)
	}
	// 30k hashes take about 1 MB; the file is 3.3 MB, its Payments more.
	grew := int64(peak) - int64(base)
	t.Logf("live heap grew by %d bytes for %d rows", grew, rows)
	if grew > 2<<20 {
		t.Errorf("live heap grew by %d bytes while parsing %d rows", grew, rows)
	}
}
