package state

import (
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

// benchRow is a row as ingest stores it: a payment as the sample files
// have it, pending, with its first history step.
func benchRow() payment.Row {
	r := fullRow()
	r.State, r.CheckID, r.CheckStatus, r.Risk, r.FundConfirmation, r.Error = payment.Pending, "", "", "", "", ""
	r.History = r.History[:1]
	return r
}

// BenchmarkEncodeRow measures the row codec on the ingest path.
func BenchmarkEncodeRow(b *testing.B) {
	r := benchRow()
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = encodeRow(buf[:0], &r)
	}
}

// BenchmarkDecodeRow measures reading a stored row back.
func BenchmarkDecodeRow(b *testing.B) {
	r := benchRow()
	raw := encodeRow(nil, &r)
	b.ReportAllocs()
	for b.Loop() {
		var got payment.Row
		if err := decodeRowValue(raw, &got); err != nil {
			b.Fatal(err)
		}
	}
}
