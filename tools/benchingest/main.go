// Command benchingest measures the peak resident set size of one ingest of
// a generated payment file, alone in its own process. Go benchmarks share
// one heap across the whole test binary, so they cannot tell what a single
// operation needs; this program does one and reads the kernel's high-water
// mark (VmHWM in /proc/self/status). It is Linux only.
//
//	go run ./tools/benchingest -rows 1000000 -mode ingest
//
// The file is generated first (csvfile.WriteSample, the same file as
// BenchmarkIngest), then the process returns its free memory to the kernel
// and resets the high-water mark (clear_refs), so the figure is that of the
// operation alone. Modes:
//
//	ingest  parse, validate and commit to a new ledger (fsync on), as the
//	        pickup job does from its spooled copy (internal/ingest/parse.go)
//	parse   parse and validate only, rows dropped
//	gocsv   gocsv merely decoding the file into a plain struct (the baseline)
//
// It prints one line of key=value pairs.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"
)

func main() {
	rows := flag.Int("rows", 1_000_000, "rows in the generated payment file")
	mode := flag.String("mode", "ingest", "ingest, parse or gocsv")
	csvPath := flag.String("csv", "", "use this payment file instead of generating one (its rows must all be valid in test mode)")
	flag.Parse()
	if err := run(*mode, *rows, *csvPath); err != nil {
		fmt.Fprintln(os.Stderr, "benchingest:", err)
		os.Exit(1)
	}
}

func run(mode string, rows int, csvPath string) error {
	op, ok := modes[mode]
	if !ok {
		return fmt.Errorf("unknown -mode %q (ingest, parse or gocsv)", mode)
	}
	work, err := os.MkdirTemp("", "benchingest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if csvPath == "" {
		csvPath = filepath.Join(work, "payments.csv")
		if err := generate(csvPath, rows); err != nil {
			return err
		}
	}
	fi, err := os.Stat(csvPath)
	if err != nil {
		return err
	}
	before, err := resetPeak()
	if err != nil {
		return err
	}
	cpu0, err := cpuTime()
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := op(csvPath, work)
	if err != nil {
		return fmt.Errorf("%s %s: %w", mode, csvPath, err)
	}
	elapsed := time.Since(start)
	cpu1, err := cpuTime()
	if err != nil {
		return err
	}
	peak, err := statusKB("VmHWM")
	if err != nil {
		return err
	}
	anon, err := statusKB("RssAnon")
	if err != nil {
		return err
	}
	file, err := statusKB("RssFile")
	if err != nil {
		return err
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("mode=%s rows=%d valid=%d file_mb=%.1f elapsed=%s cpu=%s rows_per_s=%.0f rss_before_mb=%.1f peak_rss_mb=%.1f "+
		"end_rss_anon_mb=%.1f end_rss_file_mb=%.1f heap_sys_mb=%.1f db_mb=%.1f gc_cycles=%d\n",
		mode, res.rows, res.valid, mb(fi.Size()), elapsed.Round(time.Millisecond), (cpu1 - cpu0).Round(time.Millisecond), float64(res.rows)/elapsed.Seconds(),
		kbToMB(before), kbToMB(peak), kbToMB(anon), kbToMB(file), mb(int64(ms.HeapSys)), mb(res.dbBytes), ms.NumGC)
	if res.valid != res.rows {
		return fmt.Errorf("%d of %d rows valid; the measurement needs an all-valid file", res.valid, res.rows)
	}
	return nil
}

// resetPeak hands freed memory back to the kernel and resets VmHWM to the
// current RSS, so that the generator's buffers do not count. It returns
// the RSS at that point, in kB.
func resetPeak() (int64, error) {
	runtime.GC()
	debug.FreeOSMemory()
	// "5" resets the peak RSS (Linux 4.0 and later).
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, fmt.Errorf("reset peak RSS: %w", err)
	}
	return statusKB("VmRSS")
}

// cpuTime is the user and system CPU time the process has used, all
// threads together: on a shared machine it says what the operation costs
// when the wall clock also counts other people's work.
func cpuTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

func mb(b int64) float64      { return float64(b) / (1 << 20) }
func kbToMB(kb int64) float64 { return float64(kb) / 1024 }
