package paymentlink

import (
	"testing"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

func memoLine(file string, line int, memo string, cents int64) Line {
	l := Line{Key: payment.LineKey{File: file, Line: line}, NoRef: true}
	l.Request.Memo, l.Request.Amount = memo, money.Cents(cents)
	return l
}

// The ledger is read once per pass over a file, not once per line; a
// line created in the pass is seen by the lines after it; a new file, or
// the same file again, reads the ledger afresh.
func TestMemoIndexReadsOncePerFile(t *testing.T) {
	ledger := []Line{memoLine("old", 2, "Invoice 7", 1000)}
	loads := 0
	load := func() ([]Line, error) { loads++; return append([]Line(nil), ledger...), nil }
	var x memoIndex
	if o, _ := x.clash(memoLine("a", 2, "invoice   7", 1000), load); o == nil || o.Key.File != "old" {
		t.Fatalf("clash %v, want the earlier file's line (memo compared as sameMemo)", o)
	}
	if o, _ := x.clash(memoLine("a", 3, "Invoice 8", 1000), load); o != nil {
		t.Fatalf("clash %v for another memo", o)
	}
	x.add(memoLine("a", 3, "Invoice 8", 1000))
	if o, _ := x.clash(memoLine("a", 4, "invoice 8", 1000), load); o == nil || o.Key.Line != 3 {
		t.Fatalf("clash %v, want line 3 of this file", o)
	}
	if o, _ := x.clash(memoLine("a", 5, "Invoice 8", 1001), load); o != nil {
		t.Fatalf("clash %v for another amount", o)
	}
	if loads != 1 {
		t.Fatalf("ledger read %d times for one file, want 1", loads)
	}
	// The same file applied again: line 3 was never recorded in the
	// ledger, so it is no clash now.
	if o, _ := x.clash(memoLine("a", 2, "Invoice 8", 1000), load); o != nil || loads != 2 {
		t.Fatalf("clash %v after %d loads; want none, read afresh", o, loads)
	}
}
