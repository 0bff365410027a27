package report_test

import (
	"math/big"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/batchd/batchd/internal/report"
)

// TestXLSXDateTimeExactToTheSecond writes a date-time every 7919 seconds
// (a prime, so every second of the minute and hour comes round) across
// 2026 and reads each cell's stored serial back as a spreadsheet does:
// rounded to the nearest second (Excel) and cut to the second
// (LibreOffice's display). Both must give the second written; a serial
// cut to 15 digits by excelize showed 114 of 172 such cells one second
// early in LibreOffice.
func TestXLSXDateTimeExactToTheSecond(t *testing.T) {
	table := report.Table{Sheet: "t", Columns: []report.Column{{Name: "seen", Kind: report.DateTime}}}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	var want []time.Time
	for at := start; at.Before(end); at = at.Add(7919 * time.Second) {
		want = append(want, at)
	}
	paths, err := table.Write(filepath.Join(t.TempDir(), "t.csv"), []report.Format{report.XLSX}, func(r *report.Rows) error {
		for _, at := range want {
			if err := r.Add(at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("t", excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want)+1 {
		t.Fatalf("%d rows, want %d", len(rows), len(want)+1)
	}
	epoch := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	bad := 0
	for i, at := range want {
		v := rows[i+1][0]
		r, ok := new(big.Rat).SetString(v)
		if !ok {
			t.Fatalf("row %d: serial %q is not a decimal", i+2, v)
		}
		secs := r.Mul(r, big.NewRat(86400, 1))
		nearest, cut := roundRat(secs), floorRat(secs)
		wantSecs := at.Unix() - epoch.Unix()
		if nearest != wantSecs || cut != wantSecs {
			bad++
			if bad <= 5 {
				t.Errorf("%s: serial %s reads as %d (nearest) and %d (cut) seconds, want %d",
					at.Format(time.DateTime), v, nearest, cut, wantSecs)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d date-times read back as another second", bad, len(want))
	}
}

func floorRat(r *big.Rat) int64 {
	q := new(big.Int).Div(r.Num(), r.Denom()) // Euclidean: floor for a positive denominator
	return q.Int64()
}

func roundRat(r *big.Rat) int64 {
	half := new(big.Rat).Add(r, big.NewRat(1, 2))
	return floorRat(half)
}

// TestXLSXDateTimeSerialDigits: a serial is never longer than the 15
// significant digits a spreadsheet keeps, so nothing of it is cut.
func TestXLSXDateTimeSerialDigits(t *testing.T) {
	table := report.Table{Sheet: "t", Columns: []report.Column{{Name: "seen", Kind: report.DateTime}}}
	at := time.Date(2026, 11, 25, 23, 59, 59, 0, time.UTC)
	paths, err := table.Write(filepath.Join(t.TempDir(), "t.csv"), []report.Format{report.XLSX}, func(r *report.Rows) error {
		return r.Add(at)
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, _ := f.GetCellValue("t", "A2", excelize.Options{RawCellValue: true})
	// 46351 days and 86399/86400 of a day, rounded up at the 10th place.
	if v != "46351.9999884260" && v != "46351.999988426" {
		t.Errorf("serial %q, want 46351.999988426", v)
	}
	if _, err := strconv.ParseFloat(v, 64); err != nil {
		t.Error(err)
	}
}
