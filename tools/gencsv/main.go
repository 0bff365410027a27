// Command gencsv writes a generated payment file of valid rows, for load
// tests, benchmarks and demos.
//
//	go run ./tools/gencsv -rows 1000000 -seed 1 -o /tmp/big.csv
//
// By default rows use the sandbox fixtures and are valid in test mode only;
// -live draws checksum-valid routing numbers and random accounts instead.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/batchd/batchd/internal/ingest/csvfile"
)

func main() {
	rows := flag.Int("rows", 1000, "number of rows")
	seed := flag.Int64("seed", 1, "random seed; the same seed writes the same file")
	live := flag.Bool("live", false, "use checksum-valid routing numbers instead of the sandbox fixtures")
	out := flag.String("o", "-", "output file, - for standard output")
	flag.Parse()
	if err := run(*out, csvfile.Sample{Rows: *rows, Seed: *seed, Live: *live}); err != nil {
		fmt.Fprintln(os.Stderr, "gencsv:", err)
		os.Exit(1)
	}
}

func run(path string, s csvfile.Sample) error {
	if path == "-" {
		return s.Write(os.Stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := s.Write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
