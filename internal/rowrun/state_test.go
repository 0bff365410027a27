package rowrun

import (
	"context"
	"errors"
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

func TestStateFirstHaltWins(t *testing.T) {
	var s State
	ctx := context.Background()
	if s.Stopping(ctx) || s.HaltedBy() != nil {
		t.Fatal("a new run is stopping")
	}
	first, second := errors.New("key refused"), errors.New("ledger failed")
	s.Halt(first)
	s.Halt(second)
	if !errors.Is(s.HaltedBy(), first) || !s.Stopping(ctx) {
		t.Fatalf("halted by %v, want the first cause", s.HaltedBy())
	}
}

func TestStateRowsAndUndone(t *testing.T) {
	var s State
	k := payment.RowKey{Batch: 1, Line: 2}
	if s.Skipped(k) || s.LastUndone() != nil {
		t.Fatal("a new run skips rows or has failures")
	}
	if s.Try(k) != 1 || s.Try(k) != 2 {
		t.Fatal("tries are not counted per row")
	}
	s.Skip(k)
	if !s.Skipped(k) || s.Skipped(payment.RowKey{Batch: 1, Line: 3}) {
		t.Fatal("skip is not per row")
	}
	a, b := errors.New("a"), errors.New("b")
	s.Undone(a)
	s.Undone(b)
	if s.LastUndone() != b {
		t.Fatalf("last undone %v, want the latest", s.LastUndone())
	}
}
