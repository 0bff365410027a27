package sheet_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/ingest/sheet"
	"github.com/batchd/batchd/internal/ingest/sourcefile"
	"github.com/batchd/batchd/internal/payment"
)

// FuzzOpen feeds Open and the parsers any bytes, seeded with small
// workbooks excelize writes: every input is read or refused as a
// *csvfile.FileError (or a plain error of the parsers' options), never a
// panic. Fuzz with a bound on minimizing, or each new input is minimized
// for a minute before the count of runs moves:
//
//	go test -run XXX -fuzz FuzzOpen -fuzzminimizetime 50x ./internal/ingest/sheet
func FuzzOpen(f *testing.F) {
	row := texts("1", "10.00", "Rent", "Ann", "ann@example.com", "", "", "999900001", "0001234567")
	numbers := texts("2", "", "Rent", "Bob", "bob@example.com", "", "", "999900001", "")
	numbers[1], numbers[5], numbers[8] = num("0.29000000000000004"), cell{num: "46082", numFmt: 14}, num("1234")
	formula := texts("3", "10.00", "", "Cy", "cy@example.com", "", "", "999900001", "0001234567")
	formula[2] = cell{formula: "A1"}
	f.Add(one(f, payHeader, row))
	f.Add(one(f, payHeader, row, numbers))
	f.Add(one(f, payHeader, formula))
	f.Add(one(f, texts("funding_source_id", "amount1", "amount2"), texts("x", "0.01", "0.02")))
	f.Add(one(f))
	good := one(f, payHeader, row)
	f.Add(good[:len(good)-30])
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := sheet.Open(bytes.NewReader(data), sheet.Options{MaxBytes: 1 << 20, MaxUnzipBytes: 8 << 20, MaxRows: 1000, MaxColumns: 64})
		var fe *csvfile.FileError
		if err != nil {
			if !errors.As(err, &fe) {
				t.Fatalf("open: %v is not a FileError", err)
			}
			return
		}
		defer w.Close()
		kind, err := sourcefile.DetectSource(w.Records(), opts())
		if err != nil {
			t.Fatalf("detect: %v", err)
		}
		if kind == payment.KindPayments {
			_, err = csvfile.ParseSource(w.Records(), opts(), nil, nil)
		} else {
			_, err = sourcefile.ParseSource(w.Records(), kind, opts(), nil, nil)
		}
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("parse: %v is not a FileError", err)
		}
	})
}
