package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/state"
)

// result is what an operation reports back.
type result struct {
	rows, valid int
	dbBytes     int64
}

var modes = map[string]func(csvPath, work string) (result, error){
	"ingest": ingestFile,
	"parse":  parseFile,
	"gocsv":  decodeFile,
}

// runDate is fixed so that the generated rows are judged the same way on
// every run.
func runDate() time.Time { return time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC) }

// parseOptions are the pickup job's parser options in test mode.
func parseOptions() csvfile.Options {
	return ingest.New(nil, ingest.Options{TestMode: true, Now: runDate}).ParseOptions()
}

// ingestFile does what internal/ingest does with a spooled file:
// BeginBatch, csvfile.Parse feeding Loader.Add and the rejects report, and
// Commit, into a new ledger with the default options (fsync on).
func ingestFile(csvPath, work string) (result, error) {
	db, err := state.Open(filepath.Join(work, "state"), state.Options{})
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	in, err := os.Open(csvPath)
	if err != nil {
		return result{}, err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return result{}, err
	}
	loader, err := db.BeginBatch(payment.FileMeta{Name: filepath.Base(csvPath), SHA256: "benchingest", Size: fi.Size()})
	if err != nil {
		return result{}, err
	}
	rej, err := os.Create(filepath.Join(work, "rejects.csv"))
	if err != nil {
		return result{}, err
	}
	defer rej.Close()
	w := report.NewWriter(rej)
	if err := w.Write(ingest.RejectsColumns...); err != nil {
		return result{}, err
	}
	sum, err := csvfile.Parse(in, parseOptions(),
		func(p csvfile.Payment) error { return loader.Add(p.Line, p.Payment) },
		func(f csvfile.Finding) error { return ingest.WriteFinding(w, f) })
	if err != nil {
		return result{}, err
	}
	if err := w.Flush(); err != nil {
		return result{}, err
	}
	if _, err := loader.Commit(sum.Rows, sum.Invalid); err != nil {
		return result{}, err
	}
	st, err := os.Stat(db.Path())
	if err != nil {
		return result{}, err
	}
	return result{rows: sum.Rows, valid: sum.Valid, dbBytes: st.Size()}, nil
}

// parseFile parses and validates, dropping the rows.
func parseFile(csvPath, _ string) (result, error) {
	in, err := os.Open(csvPath)
	if err != nil {
		return result{}, err
	}
	defer in.Close()
	sum, err := csvfile.Parse(in, parseOptions(), nil, nil)
	return result{rows: sum.Rows, valid: sum.Valid}, err
}

// decodeFile is the baseline: csvfile.DecodeBaseline, nothing else.
func decodeFile(csvPath, _ string) (result, error) {
	in, err := os.Open(csvPath)
	if err != nil {
		return result{}, err
	}
	defer in.Close()
	n, err := csvfile.DecodeBaseline(in)
	return result{rows: n, valid: n}, err
}

// generate writes the repository's sample of rows valid rows.
func generate(path string, rows int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := csvfile.WriteSample(f, rows, 1); err != nil {
		f.Close()
		return fmt.Errorf("generate %s: %w", path, err)
	}
	return f.Close()
}

// statusKB reads one "Name:   1234 kB" line of /proc/self/status.
func statusKB(name string) (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", name, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), name+":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", name, err)
		}
		return kb, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read %s: %w", name, err)
	}
	return 0, fmt.Errorf("read %s: not in /proc/self/status", name)
}
